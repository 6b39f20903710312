package embed

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
)

// canaryTestMaxLength keeps the emulated canaries quick (the long passage
// is cut to it).
const canaryTestMaxLength = 40

// TestCanaryGPUEmulated: the model canary on our forward pass, the CPU
// emulator of kernels/nn.cu standing in for the GPU. A sound device passes
// (against ONNX Runtime on the CPU, reported in Placement); a device that
// returns a wrong row, drops a row or returns a NaN is caught: "gpu"
// refuses to open naming the first differing input; on the dropped row,
// "auto" falls back to the CPU with one loud log line and the reason in
// Placement, and SkipCanary serves the faulty device (the flag's
// documented risk).
func TestCanaryGPUEmulated(t *testing.T) {
	dir := encGenModel(t, "tiny")
	emu := kernelemu.Open(t)
	e, err := Open(Config{Dir: dir, Provider: "gpu", MaxLength: canaryTestMaxLength, gpuExec: emu})
	if err != nil {
		t.Fatal(err)
	}
	rep := e.CanaryReport()
	_, why := e.Placement()
	e.Close()
	if !rep.Ran || !rep.Passed || rep.Reference != "onnxruntime-cpu" || rep.Inputs != len(canaryQueries)+len(canaryPassages)+1 ||
		rep.Value < canary.MinCosine || !strings.Contains(why, "model canary passed") {
		t.Fatalf("sound device: canary %+v, placement %q", rep, why)
	}
	t.Logf("sound device: %s", why)
	hidden := e.Dim()
	for _, mode := range []string{kernelemu.FaultWrong, kernelemu.FaultDrop, kernelemu.FaultNaN} {
		t.Run(mode, func(t *testing.T) {
			bad := &kernelemu.Faulty{Emu: emu, Mode: mode, RowBytes: 4 * hidden}
			_, err := Open(Config{Dir: dir, Provider: "gpu", MaxLength: canaryTestMaxLength, gpuExec: bad})
			if !errors.Is(err, canary.ErrMismatch) || !strings.Contains(err.Error(), "input ") {
				t.Fatalf("gpu on a faulty device: %v, want canary.ErrMismatch naming the input", err)
			}
			t.Logf("gpu refused: %v", err)
			if mode != kernelemu.FaultDrop {
				return // auto and SkipCanary once, on the dropped row (the emulator is slow)
			}
			var logs testutil.LogSink
			a, err := Open(Config{Dir: dir, Provider: "auto", Sessions: 1, MaxLength: canaryTestMaxLength, gpuExec: bad, Logf: logs.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			dev, why := a.Placement()
			if dev != "cpu" || !strings.Contains(why, "model canary") || !strings.Contains(strings.Join(logs.Lines(), "\n"), "MODEL CANARY FAILED") ||
				a.CanaryReport().Passed || !a.CanaryReport().Ran {
				t.Fatalf("auto on a faulty device: %q, %q, log %q, canary %+v", dev, why, strings.Join(logs.Lines(), "\n"), a.CanaryReport())
			}
			if len(logs.Lines()) != 1 {
				t.Fatalf("more than one log line: %q", strings.Join(logs.Lines(), "\n"))
			}
			s, err := Open(Config{Dir: dir, Provider: "gpu", MaxLength: canaryTestMaxLength, gpuExec: bad, SkipCanary: true})
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

// TestCanaryGoReference: a directory without model.onnx (safetensors +
// config.json, as bench/gpu's E5 directory) checks the GPU path against
// package transformer's float32 Go forward pass instead.
func TestCanaryGoReference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "st")
	out, err := exec.Command(encTestPython, encTestGenScript, "gen", "--preset", "tiny", "--seed", "1", "--tokenizer", encTestTokenizer,
		"--safetensors", "f32", "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gen_bert.py --safetensors: %v\n%s", err, out)
	}
	if err := exec.Command("rm", filepath.Join(dir, ModelFile)).Run(); err != nil {
		t.Fatal(err)
	}
	emu := kernelemu.Open(t)
	e, err := Open(Config{Dir: dir, Provider: "gpu", MaxLength: canaryTestMaxLength, gpuExec: emu})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if r := e.CanaryReport(); !r.Passed || r.Reference != "go-fp32-reference" {
		t.Fatalf("canary %+v", r)
	}
	_, err = Open(Config{Dir: dir, Provider: "gpu", MaxLength: canaryTestMaxLength, gpuExec: &kernelemu.Faulty{Emu: emu, Mode: kernelemu.FaultDrop, RowBytes: 4 * e.Dim()}})
	if !errors.Is(err, canary.ErrMismatch) {
		t.Fatalf("faulty device against the Go reference: %v", err)
	}
}

// TestCanaryCUDAPath runs provider "cuda" end to end with ONNX Runtime
// sessions that lack the CUDA provider (cudaOnCPU): the canary passes on
// a sound path, and a device that corrupts its outputs (outFault: a
// dropped row) makes Open fail naming the first differing input.
func TestCanaryCUDAPath(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Provider: "cuda", cudaOnCPU: true})
	if dev, _ := e.Placement(); dev != "cuda:0" || !e.CanaryReport().Passed || e.CanaryReport().Value < 0.99999 || e.cfg.Sessions != 2 {
		t.Fatalf("cuda path: %q, canary %+v, sessions %d", dev, e.CanaryReport(), e.cfg.Sessions)
	}
	drop := func(out []float32, dim int) {
		if len(out) > dim {
			copy(out[dim:], out[2*dim:])
		}
	}
	_, err := Open(Config{Dir: dir, Provider: "cuda", cudaOnCPU: true, outFault: drop, ORTLib: encTestORTLibPath(t)})
	if !errors.Is(err, canary.ErrMismatch) || !strings.Contains(err.Error(), "input 1 (query") {
		t.Fatalf("faulty cuda path: %v", err)
	}
}

// TestFloat16Output: an fp16 export (float16 last_hidden_state) embeds
// like the float32 one, to fp16 rounding.
func TestFloat16Output(t *testing.T) {
	dir := encGenModel(t, "tiny")
	dir16 := filepath.Join(t.TempDir(), "f16")
	out, err := exec.Command(encTestPython, encTestGenScript, "gen", "--preset", "tiny", "--seed", "1", "--tokenizer", encTestTokenizer,
		"--output-dtype", "f16", "--out", dir16).CombinedOutput()
	if err != nil {
		t.Fatalf("gen_bert.py --output-dtype f16: %v\n%s", err, out)
	}
	a := encOpen(t, Config{Dir: dir, Sessions: 1})
	b := encOpen(t, Config{Dir: dir16, Sessions: 1})
	if !b.out16 || a.out16 {
		t.Fatalf("out16: fp32 model %v, fp16 model %v", a.out16, b.out16)
	}
	texts := append(canaryQueries[:2:2], canaryLong)
	x, y := encodeBoth(t, a, b, texts, true)
	d := a.Dim()
	for i := range texts {
		if c := testutil.Cosine(x[i*d:(i+1)*d], y[i*d:(i+1)*d]); !(c >= 0.9999) {
			t.Fatalf("text %d: fp16 vs fp32 export cosine %.6f", i, c)
		}
	}
}
