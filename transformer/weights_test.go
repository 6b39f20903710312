package transformer

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestMain removes the generated models after the package's tests.
func TestMain(m *testing.M) { testutil.Main(m) }

// genModel generates a model with scripts/<script> once per test binary
// (testutil.GenModel) with the tokenizer file of its architecture.
func genModel(tb testing.TB, script string, args ...string) string {
	tb.Helper()
	tok := filepath.Join(testutil.RepoRoot(tb), ".cache", "tokenizers", "bert-uncased.json")
	if script == "gen_qwen3.py" {
		tok = filepath.Join(testutil.RepoRoot(tb), ".cache", "tokenizers", "qwen3.json")
	}
	if _, err := os.Stat(tok); err != nil {
		testutil.RequireNative(tb, "tokenizer "+tok)
	}
	return testutil.GenModel(tb, "model", script, append([]string{"--tokenizer", tok}, args...)...)
}

func loadDir(tb testing.TB, dir, format string) (*Config, *Weights) {
	tb.Helper()
	cfg, err := LoadConfig(dir)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := LoadWeightsFormat(dir, cfg, format)
	if err != nil {
		tb.Fatalf("load %s weights of %s: %v", format, dir, err)
	}
	tb.Cleanup(func() { w.Close() })
	return cfg, w
}

// TestONNXEqualsSafetensors: the initializers of the ONNX export, named by
// the graph (anonymous MatMul weights by their biases for BERT, by order and
// structure for Qwen3) and transposed back to [out, in], equal the state
// dict the generator writes as safetensors, tensor for tensor, bit for bit.
func TestONNXEqualsSafetensors(t *testing.T) {
	for _, tc := range []struct {
		script string
		args   []string
	}{
		{"gen_bert.py", []string{"--preset", "tiny", "--seed", "1", "--safetensors", "f32"}},
		{"gen_qwen3.py", []string{"--variant", "last", "--seed", "1", "--safetensors", "f32"}},
		{"gen_qwen3.py", []string{"--variant", "full", "--preset", "small", "--seed", "2", "--safetensors", "f32", "--shards", "3"}},
	} {
		t.Run(tc.script+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			dir := genModel(t, tc.script, tc.args...)
			cfg, wo := loadDir(t, dir, "onnx")
			_, ws := loadDir(t, dir, "safetensors")
			names, _ := expected(cfg)
			for _, n := range names {
				a, _ := wo.Tensor(n)
				b, _ := ws.Tensor(n)
				fa, fb := a.Float32(), b.Float32()
				for i := range fa {
					if math.Float32bits(fa[i]) != math.Float32bits(fb[i]) {
						t.Fatalf("%s[%d]: onnx %v (from %s, transposed %v), safetensors %v", n, i, fa[i], wo.Source, a.Transposed, fb[i])
					}
				}
			}
			t.Logf("%d tensors equal (%s: %d names)", len(names), cfg.ModelType, len(wo.Names()))
		})
	}
}

// TestHalfSafetensors: F16 and BF16 files load as the F32 state dict
// rounded to nearest even, and Float16Into rounds bf16 to the same fp16 a
// float32 round trip gives.
func TestHalfSafetensors(t *testing.T) {
	ref := genModel(t, "gen_bert.py", "--preset", "tiny", "--seed", "1", "--safetensors", "f32")
	cfg, w32 := loadDir(t, ref, "safetensors")
	for _, dt := range []string{"f16", "bf16"} {
		t.Run(dt, func(t *testing.T) {
			dir := genModel(t, "gen_bert.py", "--preset", "tiny", "--seed", "1", "--safetensors", dt)
			_, w := loadDir(t, dir, "safetensors")
			names, _ := expected(cfg)
			for _, n := range names {
				a, _ := w32.Tensor(n)
				b, _ := w.Tensor(n)
				if b.DType.String() != strings.ToUpper(dt) {
					t.Fatalf("%s is %v, want %s", n, b.DType, dt)
				}
				fa, fb := a.Float32(), b.Float32()
				tol := 1.0 / 2048 // fp16: 11 significant bits
				if dt == "bf16" {
					tol = 1.0 / 256
				}
				for i := range fa {
					if d := math.Abs(float64(fa[i] - fb[i])); d > tol*math.Abs(float64(fa[i]))+1e-7 {
						t.Fatalf("%s[%d]: %s %v, f32 %v", n, i, dt, fb[i], fa[i])
					}
				}
				h := make([]uint16, b.Len())
				if bad := b.Float16Into(h); bad != 0 {
					t.Fatalf("%s: %d values overflow fp16", n, bad)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	bert := `{"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16`
	qwen := `{"model_type": "qwen3", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 16`
	for _, tc := range []struct {
		json, field string
	}{
		{bert + `}`, ""},
		{qwen + `}`, ""},
		{qwen + `, "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}}`, ""},
		{bert + `, "hidden_act": "gelu_new"}`, "hidden_act"},
		{bert + `, "position_embedding_type": "relative_key"}`, "position_embedding_type"},
		{bert + `, "num_attention_heads": 3}`, "num_attention_heads"},
		{qwen + `, "num_key_value_heads": 3}`, "num_key_value_heads"},
		{qwen + `, "head_dim": 5}`, "head_dim"},
		{qwen + `, "attention_bias": true}`, "attention_bias"},
		{qwen + `, "use_sliding_window": true}`, "use_sliding_window"},
		{qwen + `, "rope_scaling": {"type": "yarn", "factor": 4}}`, "rope_scaling"},
		{qwen + `, "rope_parameters": {"rope_theta": 1e6, "rope_type": "yarn"}}`, "rope_type"},
		{qwen + `, "layer_types": ["sliding_attention"]}`, "layer_types"},
		{`{"model_type": "llama"}`, "model_type"},
		{`not json`, ""},
	} {
		c, err := ParseConfig([]byte(tc.json), "config.json")
		switch {
		case tc.field == "" && tc.json != "not json":
			if err != nil {
				t.Errorf("%s: %v", tc.json, err)
			}
			if c != nil && c.Qwen3 != nil && strings.Contains(tc.json, "rope_parameters") && c.Qwen3.RopeTheta != 1e6 {
				t.Errorf("rope_parameters.rope_theta not read: %v", c.Qwen3.RopeTheta)
			}
		case err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field):
			t.Errorf("%s: error %v, want ErrConfig naming %q", tc.json, err, tc.field)
		}
	}
}

// TestMissingAndMisshapen: a state dict without a tensor, or with a wrong
// shape, is refused naming the tensor.
func TestMissingAndMisshapen(t *testing.T) {
	dir := genModel(t, "gen_bert.py", "--preset", "tiny", "--seed", "1", "--safetensors", "f32")
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	small := *cfg.Bert
	small.Intermediate = 100
	if _, err := LoadWeightsFormat(dir, &Config{ModelType: TypeBert, Bert: &small}, "safetensors"); !errors.Is(err, ErrWeights) || !strings.Contains(err.Error(), "intermediate.dense.weight is [512 128], config.json implies [100 128]") {
		t.Errorf("wrong shape: %v", err)
	}
	deep := *cfg.Bert
	deep.Layers = 3
	if _, err := LoadWeightsFormat(dir, &Config{ModelType: TypeBert, Bert: &deep}, "onnx"); !errors.Is(err, ErrWeights) || !strings.Contains(err.Error(), "encoder.layer.2.") {
		t.Errorf("missing layer: %v", err)
	}
	if _, err := LoadWeights(t.TempDir(), cfg); !errors.Is(err, ErrWeights) {
		t.Errorf("empty directory: %v", err)
	}
}

func FuzzParseSafetensors(f *testing.F) {
	f.Add([]byte{})
	f.Add(append([]byte{2, 0, 0, 0, 0, 0, 0, 0}, "{}"...))
	hdr := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	seed := make([]byte, 8)
	seed[0] = byte(len(hdr))
	f.Add(append(append(seed, hdr...), make([]byte, 8)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseSafetensors(b)
		if err != nil {
			return
		}
		for _, n := range w.Names() {
			tt, _ := w.Tensor(n)
			if tt.Len()*tt.DType.Size() != len(tt.data) {
				t.Fatalf("%s: %d elements of %v in %d bytes", n, tt.Len(), tt.DType, len(tt.data))
			}
			tt.Float32()
		}
	})
}

func FuzzParseONNX(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := parseONNX(b)
		if err != nil {
			return
		}
		for _, in := range g.inits {
			tensorOf(in, func(string) ([]byte, error) { return nil, fmt.Errorf("no external data in fuzzing") })
		}
	})
}

// TestONNXOutputInfo reads the declared type and dimensions of a graph
// output from the file (symbolic dims -1), for float32 and float16 outputs
// of both generators, and names a missing output.
func TestONNXOutputInfo(t *testing.T) {
	for _, tc := range []struct {
		script string
		args   []string
		output string
		elem   string
		dims   []int64
	}{
		{"gen_bert.py", []string{"--preset", "tiny", "--seed", "1"}, "last_hidden_state", "float32", []int64{-1, -1, 128}},
		{"gen_bert.py", []string{"--preset", "tiny", "--seed", "1", "--output-dtype", "f16"}, "last_hidden_state", "float16", []int64{-1, -1, 128}},
		{"gen_qwen3.py", []string{"--variant", "last", "--seed", "1", "--output-dtype", "f16"}, "logits", "float16", []int64{-1, 151669}},
		{"gen_qwen3.py", []string{"--variant", "full", "--seed", "1"}, "logits", "float32", []int64{-1, -1, 151669}},
	} {
		dir := genModel(t, tc.script, tc.args...)
		o, err := ONNXOutputInfo(filepath.Join(dir, "model.onnx"), tc.output)
		if err != nil || o.Elem != tc.elem || !slices.Equal(o.Dims, tc.dims) {
			t.Errorf("%s %v: %+v, %v; want %s %v", tc.script, tc.args, o, err, tc.elem, tc.dims)
		}
		if _, err := ONNXOutputInfo(filepath.Join(dir, "model.onnx"), "nope"); err == nil || !strings.Contains(err.Error(), `no output "nope"`) {
			t.Errorf("missing output: %v", err)
		}
	}
}
