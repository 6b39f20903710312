package transformer

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/kernels"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
)

// The device check (bench/gpu/inference.sh) runs the two tests below on a
// GPU machine: TestDeviceParity against PyTorch fp32 outputs of randomly
// initialised Hugging Face models that bench/gpu/inference.py saved as
// safetensors, TestDeviceTiming on the workloads. Both skip unless
// their environment variables are set.
const (
	// EnvInferDir is inference.py build's directory: bert/ and qwen06/
	// (config.json + model.safetensors), parity_inputs.json, torch_ref.json.
	EnvInferDir = "RLSEARCH_INFER_DIR"
	// EnvInferOut is where the tests write parity.json and go_timing.json
	// (default EnvInferDir, or the working directory for timing).
	EnvInferOut = "RLSEARCH_INFER_OUT"
	// EnvInferTiming=1 runs TestDeviceTiming; EnvInferModels limits it to
	// a comma list of e5, qwen0.6b, qwen4b (default all three).
	EnvInferTiming = "RLSEARCH_INFER_TIMING"
	EnvInferModels = "RLSEARCH_INFER_MODELS"
	// EnvInferEmu=1 (inference.sh's dry run, on a machine without a GPU)
	// runs both tests on the CPU emulator of kernels/nn.cu, timing tiny
	// shapes instead of the issue's: it checks the plumbing, not speed.
	EnvInferEmu = "RLSEARCH_INFER_EMU"
)

// deviceOpeners returns the GPU constructors, or their emulated versions
// under EnvInferEmu=1 (after skipping or failing the test without a GPU).
func deviceOpeners(t *testing.T) (bert func(BertConfig, *Weights) (*BertGPU, error), qwen func(Qwen3Config, *Weights, [2]int32) (*Qwen3GPU, error)) {
	if os.Getenv(EnvInferEmu) == "1" {
		e := kernelemu.Open(t)
		return func(c BertConfig, w *Weights) (*BertGPU, error) { return OpenBertGPUOn(c, w, GPUConfig{}, e) },
			func(c Qwen3Config, w *Weights, rows [2]int32) (*Qwen3GPU, error) {
				return OpenQwen3GPUOn(c, w, rows, GPUConfig{}, e)
			}
	}
	cudatest.Device(t)
	return func(c BertConfig, w *Weights) (*BertGPU, error) { return OpenBertGPU(c, w, GPUConfig{}) },
		func(c Qwen3Config, w *Weights, rows [2]int32) (*Qwen3GPU, error) {
			return OpenQwen3GPU(c, w, rows, GPUConfig{})
		}
}

// parityInputs is parity_inputs.json.
type parityInputs struct {
	Bert struct {
		IDs [][]int32 `json:"ids"`
	} `json:"bert"`
	Qwen struct {
		IDs  [][]int32 `json:"ids"`
		Rows [2]int32  `json:"rows"` // no, yes
	} `json:"qwen"`
}

// torchRef is torch_ref.json: PyTorch fp32 outputs, one sequence at a time.
type torchRef struct {
	Bert struct {
		Embeddings [][]float64 `json:"embeddings"`
	} `json:"bert"`
	Qwen struct {
		Logits [][2]float64 `json:"logits"` // no, yes
	} `json:"qwen"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func p64(no, yes float64) float64 { return 1 / (1 + math.Exp(no-yes)) }

// TestDeviceParity: our GPU forward passes on the weights PyTorch saved,
// against PyTorch fp32 (the bars: cosine ≥ 0.999 per E5 input,
// yes-probabilities within 2e-3, a batch equal to one input at a time
// within 1e-3), and, for BERT and the short Qwen3 inputs, our float32 CPU
// reference against PyTorch too.
func TestDeviceParity(t *testing.T) {
	dir := os.Getenv(EnvInferDir)
	if dir == "" {
		t.Skipf("%s not set (bench/gpu/inference.sh sets it)", EnvInferDir)
	}
	openBert, openQwen := deviceOpeners(t)
	out := cmpOr(os.Getenv(EnvInferOut), dir)
	var in parityInputs
	var want torchRef
	readJSON(t, filepath.Join(dir, "parity_inputs.json"), &in)
	readJSON(t, filepath.Join(dir, "torch_ref.json"), &want)
	report := map[string]any{}
	defer func() { writeJSON(t, filepath.Join(out, "parity.json"), report) }()

	t.Run("e5", func(t *testing.T) {
		cfg, w := loadDir(t, filepath.Join(dir, "bert"), "safetensors")
		m, err := openBert(*cfg.Bert, w)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		p := Pooling{Normalize: true}
		got, err := m.Embed(in.Bert.IDs, p)
		if err != nil {
			t.Fatal(err)
		}
		h := cfg.Bert.Hidden
		ref := NewBertRef(*cfg.Bert, w)
		minCos, minRef, single := 1.0, 1.0, 0.0
		var lens []int
		for b, ids := range in.Bert.IDs {
			lens = append(lens, len(ids))
			minCos = min(minCos, testutil.Cosine(got[b*h:(b+1)*h], want.Bert.Embeddings[b]))
			minRef = min(minRef, testutil.Cosine(ref.Embed([][]int32{ids}, p), want.Bert.Embeddings[b]))
			one, err := m.Embed([][]int32{ids}, p)
			if err != nil {
				t.Fatal(err)
			}
			for i := range one {
				single = max(single, math.Abs(float64(one[i]-got[b*h+i])))
			}
		}
		report["e5"] = map[string]any{"device": m.Device(), "lengths": lens, "min_cosine_gpu_vs_torch_fp32": minCos,
			"min_cosine_go_fp32_ref_vs_torch_fp32": minRef, "max_abs_batch_vs_single": single,
			"pass": minCos >= 0.999 && single <= 1e-3}
		t.Logf("e5: min cosine GPU/torch %.6f, Go fp32 ref/torch %.7f, batch vs single %.2g", minCos, minRef, single)
		if minCos < 0.999 || single > 1e-3 || minRef < 0.99999 {
			t.Errorf("e5 parity failed: %v", report["e5"])
		}
	})
	t.Run("qwen3-0.6b", func(t *testing.T) {
		cfg, w := loadDir(t, filepath.Join(dir, "qwen06"), "safetensors")
		m, err := openQwen(*cfg.Qwen3, w, in.Qwen.Rows)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		got, err := m.LastLogits(in.Qwen.IDs)
		if err != nil {
			t.Fatal(err)
		}
		ref := NewQwen3Ref(*cfg.Qwen3, w)
		var maxP, maxL, single, maxRefP float64
		var lens []int
		var probs []float64
		for b, ids := range in.Qwen.IDs {
			lens = append(lens, len(ids))
			wp := p64(want.Qwen.Logits[b][0], want.Qwen.Logits[b][1])
			gp := float64(YesProbability(got[b][0], got[b][1]))
			probs = append(probs, wp)
			maxP = max(maxP, math.Abs(gp-wp))
			maxL = max(maxL, math.Abs(float64(got[b][0])-want.Qwen.Logits[b][0]), math.Abs(float64(got[b][1])-want.Qwen.Logits[b][1]))
			one, err := m.LastLogits([][]int32{ids})
			if err != nil {
				t.Fatal(err)
			}
			single = max(single, math.Abs(float64(YesProbability(one[0][0], one[0][1]))-gp))
			if len(ids) <= 32 {
				r := ref.LastLogits(ids, in.Qwen.Rows[:])
				maxRefP = max(maxRefP, math.Abs(float64(YesProbability(r[0], r[1]))-wp))
			}
		}
		report["qwen3-0.6b"] = map[string]any{"device": m.Device(), "lengths": lens, "torch_p_yes": probs,
			"max_abs_p_yes_gpu_vs_torch_fp32": maxP, "max_abs_logit_gpu_vs_torch_fp32": maxL,
			"max_abs_p_yes_go_fp32_ref_vs_torch_fp32_short": maxRefP, "max_abs_p_yes_batch_vs_single": single,
			"pass": maxP <= 2e-3 && single <= 1e-3}
		t.Logf("qwen3-0.6b: max |ΔP(yes)| GPU/torch %.2g (logits %.2g), Go ref/torch %.2g, batch vs single %.2g", maxP, maxL, maxRefP, single)
		if maxP > 2e-3 || single > 1e-3 || maxRefP > 1e-4 {
			t.Errorf("qwen3 parity failed: %v", report["qwen3-0.6b"])
		}
	})
}

// fastRandomWeights builds fp16 weights of every tensor cfg needs in host
// memory, quickly enough for the 4B shape (8 GB): matrices uniform with
// standard deviation 0.02 (Hugging Face's initializer_range), gains 1 and
// shifts uniform ±0.035. Timing only: the values do not matter for speed
// as long as they are not zeros (METHOD.md).
func fastRandomWeights(cfg *Config, seed uint64) *Weights {
	var table [65536]uint16
	for i := range table {
		table[i] = kernels.F2H(float32((float64(i)/65536 - 0.5) * 0.02 * math.Sqrt(12)))
	}
	names, shapes := expected(cfg)
	w := &Weights{Format: "memory", Source: "fastRandomWeights", tensors: map[string]*Tensor{}}
	for ti, n := range names {
		t := &Tensor{Name: n, DType: F16, Shape: shapes[n]}
		t.data = make([]byte, 2*t.Len())
		gain := len(t.Shape) == 1 && (strings.HasSuffix(n, "norm.weight") || strings.HasSuffix(n, "LayerNorm.weight"))
		parallelRange(t.Len()/4+1, func(lo, hi int) {
			r := rand.New(rand.NewPCG(seed, uint64(ti)<<32|uint64(lo)))
			for i := lo; i < hi; i++ {
				u := r.Uint64()
				for k := 0; k < 4 && 4*i+k < t.Len(); k++ {
					v := table[uint16(u>>(16*k))]
					if gain {
						v = 0x3c00 // 1.0
					}
					binary.LittleEndian.PutUint16(t.data[2*(4*i+k):], v)
				}
			}
		})
		w.tensors[n] = t
	}
	return w
}

// Model shapes of the issue (config.json of intfloat/e5-base-v2 =
// bert-base-uncased; Qwen/Qwen3-0.6B and Qwen/Qwen3-4B, the bases of
// Qwen3-Reranker-0.6B and -4B).
var (
	shapeE5Base = BertConfig{VocabSize: 30522, Hidden: 768, Layers: 12, Heads: 12, Intermediate: 3072, MaxPositions: 512,
		TypeVocab: 2, LayerNormEps: 1e-12, HiddenAct: "gelu", PositionType: "absolute"}
	shapeQwen06 = Qwen3Config{VocabSize: 151936, Hidden: 1024, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128,
		Intermediate: 3072, RMSNormEps: 1e-6, RopeTheta: 1e6, TieWordEmbeddings: true}
	shapeQwen4B = Qwen3Config{VocabSize: 151936, Hidden: 2560, Layers: 36, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 9728, RMSNormEps: 1e-6, RopeTheta: 1e6, TieWordEmbeddings: true}
)

// timing is one row of go_timing.json (and of inference.py's torch rows).
type timing struct {
	Impl      string  `json:"impl"`
	Mode      string  `json:"mode"`
	Model     string  `json:"model"`
	Workload  string  `json:"workload"`
	Batch     int     `json:"batch"`
	Seq       int     `json:"seq"`
	ItemsPerS float64 `json:"items_per_s"`
	MedianMS  float64 `json:"median_ms"`
	P90MS     float64 `json:"p90_ms"`
	Iters     int     `json:"iters"`
	LoadS     float64 `json:"load_s"`
}

// timeCalls runs fn warm times, then until budget has passed (at least
// minIters times), and returns the sorted wall times in ms of the timed calls.
func timeCalls(t *testing.T, warm, minIters int, budget time.Duration, fn func() error) []float64 {
	for range warm {
		if err := fn(); err != nil {
			t.Fatal(err)
		}
	}
	var ms []float64
	start := time.Now()
	for len(ms) < minIters || time.Since(start) < budget {
		t0 := time.Now()
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		if len(ms) >= 200 {
			break
		}
	}
	slices.Sort(ms)
	return ms
}

func fixedIDs(r *rand.Rand, n, seq, vocab int) [][]int32 {
	lens := make([]int, n)
	for i := range lens {
		lens[i] = seq
	}
	return randomIDs(r, lens, 1000, vocab)
}

// TestDeviceTiming times the GPU forward passes end to end per call (host
// packing, uploads of the ids, the forward pass, the download of the
// vectors or logits), on random weights of the shapes: E5-base
// 512 queries × 32 tokens, 128 passages × 256, one query × 32; the
// Qwen3-Reranker 0.6B and 4B shapes, 256 pairs × 512 tokens.
func TestDeviceTiming(t *testing.T) {
	if os.Getenv(EnvInferTiming) != "1" {
		t.Skipf("%s not set (bench/gpu/inference.sh sets it)", EnvInferTiming)
	}
	openBert, openQwen := deviceOpeners(t)
	e5, q06, q4b := shapeE5Base, shapeQwen06, shapeQwen4B
	sizes := [][2]int{{512, 32}, {128, 256}, {1, 32}} // E5 (texts, tokens)
	pairs, pairLen := 256, 512
	if os.Getenv(EnvInferEmu) == "1" { // plumbing only: tiny shapes
		e5 = BertConfig{VocabSize: 2000, Hidden: 64, Layers: 1, Heads: 2, Intermediate: 64, MaxPositions: 512, TypeVocab: 2, LayerNormEps: 1e-12, HiddenAct: "gelu", PositionType: "absolute"}
		q06 = Qwen3Config{VocabSize: 2000, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 1, HeadDim: 16, Intermediate: 32, RMSNormEps: 1e-6, RopeTheta: 1e6, TieWordEmbeddings: true}
		q4b = q06
		sizes, pairs, pairLen = [][2]int{{4, 8}, {2, 16}, {1, 8}}, 2, 16
	}
	models := strings.Split(cmpOr(os.Getenv(EnvInferModels), "e5,qwen0.6b,qwen4b"), ",")
	out := cmpOr(os.Getenv(EnvInferOut), ".")
	var rows []timing
	defer func() { writeJSON(t, filepath.Join(out, "go_timing.json"), rows) }()
	r := rand.New(rand.NewPCG(42, 0))
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			t0 := time.Now()
			switch name {
			case "e5":
				cfg := &Config{ModelType: TypeBert, Bert: &e5}
				m, err := openBert(e5, fastRandomWeights(cfg, 1))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				load := time.Since(t0).Seconds()
				for _, wl := range []struct {
					name   string
					n, seq int
				}{{"queries", sizes[0][0], sizes[0][1]}, {"passages", sizes[1][0], sizes[1][1]}, {"one query", sizes[2][0], sizes[2][1]}} {
					ids := fixedIDs(r, wl.n, wl.seq, e5.VocabSize)
					ms := timeCalls(t, 3, 10, 2*time.Second, func() error { _, err := m.Embed(ids, Pooling{Normalize: true}); return err })
					med := ms[len(ms)/2]
					rows = append(rows, timing{Impl: "rlsearch", Mode: "fp16", Model: "e5-base", Workload: wl.name, Batch: wl.n, Seq: wl.seq,
						ItemsPerS: float64(wl.n) / med * 1000, MedianMS: med, P90MS: ms[len(ms)*9/10], Iters: len(ms), LoadS: load})
					t.Logf("e5-base %s %d×%d: %.0f/s, median %.2f ms (%d calls)", wl.name, wl.n, wl.seq, float64(wl.n)/med*1000, med, len(ms))
				}
			case "qwen0.6b", "qwen4b":
				shape, warm, iters := q06, 2, 5
				if name == "qwen4b" {
					shape, warm, iters = q4b, 1, 3
				}
				cfg := &Config{ModelType: TypeQwen3, Qwen3: &shape}
				m, err := openQwen(shape, fastRandomWeights(cfg, 2), [2]int32{2152 % int32(shape.VocabSize), 9693 % int32(shape.VocabSize)})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				load := time.Since(t0).Seconds()
				ids := fixedIDs(r, pairs, pairLen, shape.VocabSize)
				ms := timeCalls(t, warm, iters, 3*time.Second, func() error { _, err := m.LastLogits(ids); return err })
				med := ms[len(ms)/2]
				n := float64(pairs)
				rows = append(rows, timing{Impl: "rlsearch", Mode: "fp16", Model: "qwen3-reranker-" + strings.TrimPrefix(name, "qwen"), Workload: "pairs",
					Batch: pairs, Seq: pairLen, ItemsPerS: n / med * 1000, MedianMS: med, P90MS: ms[len(ms)*9/10], Iters: len(ms), LoadS: load})
				t.Logf("%s %d×%d: %.0f pairs/s, median %.1f ms (%d calls, load %.1f s)", name, pairs, pairLen, n/med*1000, med, len(ms), load)
			default:
				t.Fatalf("unknown model %q in %s", name, EnvInferModels)
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
