package rerank

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
)

// canaryTestMaxLength keeps the emulated canaries quick (the long
// document is cut to fit).
const canaryTestMaxLength = 96

// TestCanaryGPUEmulated: the reranker's model canary on our Qwen3 forward
// pass, the CPU emulator of kernels/nn.cu standing in for the GPU. A
// sound device passes against ONNX Runtime on the CPU; a device that
// returns wrong logits, drops a row (zeros) or a NaN is caught: "gpu"
// refuses naming the first differing pair; on the wrong logits "auto"
// falls back to the CPU with one loud log line and the reason in
// Placement, and SkipCanary serves the faulty device.
func TestCanaryGPUEmulated(t *testing.T) {
	dir := qwen3Model(t, "last")
	lib := testutil.ORTLib(t)
	emu := kernelemu.Open(t)
	g, err := Open(Config{Dir: dir, Provider: "gpu", ORTLib: lib, MaxLength: canaryTestMaxLength, gpuExec: emu})
	if err != nil {
		t.Fatal(err)
	}
	rep := g.CanaryReport()
	_, why := g.Placement()
	g.Close()
	if !rep.Passed || rep.Reference != "onnxruntime-cpu" || rep.Inputs != len(canaryPairs) || rep.Value > canary.MaxScoreDelta || !strings.Contains(why, "model canary passed") {
		t.Fatalf("sound device: canary %+v, placement %q", rep, why)
	}
	t.Logf("sound device: %s", why)
	for _, mode := range []string{kernelemu.FaultWrong, kernelemu.FaultDrop, kernelemu.FaultNaN} {
		t.Run(mode, func(t *testing.T) {
			bad := &kernelemu.Faulty{Emu: emu, Mode: mode, RowBytes: 8}
			_, err := Open(Config{Dir: dir, Provider: "gpu", ORTLib: lib, MaxLength: canaryTestMaxLength, gpuExec: bad})
			if !errors.Is(err, canary.ErrMismatch) || !strings.Contains(err.Error(), "input ") || !strings.Contains(err.Error(), "pair ") {
				t.Fatalf("gpu on a faulty device: %v, want canary.ErrMismatch naming the pair", err)
			}
			t.Logf("gpu refused: %v", err)
			if mode != kernelemu.FaultWrong {
				return
			}
			var logs testutil.LogSink
			a, err := Open(Config{Dir: dir, Provider: "auto", Sessions: 1, ORTLib: lib, MaxLength: canaryTestMaxLength, gpuExec: bad, Logf: logs.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			dev, why := a.Placement()
			if dev != "cpu" || !strings.Contains(why, "model canary") || !strings.Contains(strings.Join(logs.Lines(), "\n"), "MODEL CANARY FAILED") || len(logs.Lines()) != 1 || a.CanaryReport().Passed {
				t.Fatalf("auto on a faulty device: %q, %q, log %q", dev, why, strings.Join(logs.Lines(), "\n"))
			}
			if _, err := a.score(context.Background(), "q", []string{"d"}, nil); err != nil {
				t.Fatalf("auto's CPU fallback does not serve: %v", err)
			}
			s, err := Open(Config{Dir: dir, Provider: "gpu", ORTLib: lib, MaxLength: canaryTestMaxLength, gpuExec: bad, SkipCanary: true})
			if err != nil {
				t.Fatalf("SkipCanary: %v", err)
			}
			if _, why := s.Placement(); !strings.Contains(why, "skipped") {
				t.Errorf("SkipCanary placement %q", why)
			}
			s.Close()
		})
	}
}

// TestCanaryCUDAPath runs provider "cuda" end to end on ONNX Runtime
// sessions without the CUDA provider (cudaOnCPU), for both model kinds:
// the canary passes, and a device that skews every score by 5% + 0.05
// (outFault) makes Open fail naming the first differing pair.
func TestCanaryCUDAPath(t *testing.T) {
	for _, dir := range []string{qwen3Model(t, "last"), crossModel(t, 1)} {
		r := openTest(t, Config{Dir: dir, Provider: "cuda", cudaOnCPU: true})
		if dev, _ := r.Placement(); dev != "cuda:0" || !r.CanaryReport().Passed || r.CanaryReport().Value != 0 || r.cfg.Sessions != 1 {
			t.Fatalf("%s cuda path: %q, canary %+v, sessions %d", r.Kind(), dev, r.CanaryReport(), r.cfg.Sessions)
		}
		shift := func(s []float32) {
			for i := range s {
				s[i] = s[i]*1.05 + 0.05
			}
		}
		_, err := Open(Config{Dir: dir, Provider: "cuda", cudaOnCPU: true, outFault: shift, ORTLib: testutil.ORTLib(t)})
		if !errors.Is(err, canary.ErrMismatch) || !strings.Contains(err.Error(), "input 0 (pair") {
			t.Fatalf("%s: faulty cuda path: %v", r.Kind(), err)
		}
	}
}

// TestRerankCUDA: explicit cuda where ORT's CUDA provider cannot run
// (here: the CPU-only ORT of setup.sh) fails with ortenv.ErrNoCUDAProvider
// naming what is missing, never runs on the CPU; with the GPU build on a
// GPU machine it scores like the CPU within the canary's bar.
func TestRerankCUDA(t *testing.T) {
	dir := qwen3Model(t, "last")
	lib := testutil.ORTLib(t)
	r, err := Open(Config{Dir: dir, Provider: "cuda", ORTLib: lib})
	if err != nil {
		if !errors.Is(err, ortenv.ErrNoCUDAProvider) {
			t.Fatalf("Open(cuda) where it cannot run: %v, want ortenv.ErrNoCUDAProvider", err)
		}
		if strings.Contains(lib, "ort-gpu") {
			cudatest.SkipUnusable(t, err)
		}
		t.Logf("cuda unavailable: %v", err)
		return
	}
	defer r.Close()
	if !r.CanaryReport().Passed {
		t.Fatalf("canary %+v", r.CanaryReport())
	}
	if err := (Config{Dir: "x", Provider: "cuda:-1"}).Validate(); err == nil {
		t.Fatal("cuda:-1 validated")
	}
}

// TestFloat16Outputs: fp16 exports (float16 logits, gen_qwen3.py /
// gen_bert.py --output-dtype f16) score like their float32 twins to fp16
// rounding.
func TestFloat16Outputs(t *testing.T) {
	tok := qwen3TokenizerPath(t)
	for _, m := range []struct {
		name    string
		a, b    string
		relTol  float64
		nLabels int
	}{
		{"qwen3", qwen3Model(t, "last"), genModel(t, "gen_qwen3.py", "--variant", "last", "--seed", "1", "--tokenizer", tok, "--output-dtype", "f16"), 2e-3, 0},
		{"cross", crossModel(t, 2), genModel(t, "gen_bert.py", "--preset", "tiny", "--head", "classifier", "--num-labels", "2", "--seed", "1",
			"--tokenizer", bertTokenizerPath(t), "--output-dtype", "f16"), 2e-3, 2},
	} {
		t.Run(m.name, func(t *testing.T) {
			a := openTest(t, Config{Dir: m.a, Sessions: 1})
			b := openTest(t, Config{Dir: m.b, Sessions: 1})
			if !b.out16 || a.out16 {
				t.Fatalf("out16: %v %v", a.out16, b.out16)
			}
			docs := testDocs(6)
			x, err := a.score(context.Background(), "who built the bridges of Paris?", docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.score(context.Background(), "who built the bridges of Paris?", docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if d := math.Abs(float64(x[i] - y[i])); d > m.relTol*max(1, math.Abs(float64(x[i]))) {
					t.Fatalf("doc %d: fp16 export %v, fp32 %v", i, y[i], x[i])
				}
			}
		})
	}
}

// TestScoreIDs: pre-tokenised prompts score exactly as Rerank's own, in
// order; bad rows and cross-encoders are refused with ErrBadInput.
func TestScoreIDs(t *testing.T) {
	r := openTest(t, Config{Dir: qwen3Model(t, "last"), Sessions: 1})
	docs := testDocs(5)
	want, err := r.score(context.Background(), "who built the bridges of Paris?", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([][]int32, len(docs))
	for i, d := range docs {
		ids[i], _ = r.encodePair("who built the bridges of Paris?", d)
	}
	got, err := r.ScoreIDs(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("prompt %d: ScoreIDs %v, score %v", i, got[i], want[i])
		}
	}
	for name, bad := range map[string][][]int32{"empty row": {{}}, "id past the vocabulary": {{1, 1 << 30}}, "negative id": {{-1}}} {
		if _, err := r.ScoreIDs(context.Background(), bad); !errors.Is(err, rlsearch.ErrBadInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := openTest(t, Config{Dir: crossModel(t, 1), Sessions: 1})
	if _, err := c.ScoreIDs(context.Background(), ids[:1]); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("cross-encoder ScoreIDs: %v", err)
	}
}
