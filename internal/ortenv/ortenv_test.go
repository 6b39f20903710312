package ortenv

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestSession runs the tiny generated BERT through ONNX Runtime with this
// build's binding (ort_cgo.go, or ort_purego.go under CGO_ENABLED=0, which
// `make vet` runs): an output ORT allocates equals one written into a Go
// buffer, the mean-pooled result equals gen_bert.py's numpy reference, a
// float16 output (gen_bert.py --output-dtype f16) equals the float32 one to
// fp16 rounding, and bad calls are errors, not crashes. Under
// CGO_ENABLED=0 it is the check that every OrtApi index of ort_purego.go
// names the function it is called as.
func TestSession(t *testing.T) {
	lib := testutil.ORTLib(t)
	if err := Init(lib); err != nil {
		t.Fatal(err)
	}
	if err := Init(lib + ".other"); !errors.Is(err, ErrLibMismatch) {
		t.Fatalf("Init of another library: %v, want ErrLibMismatch", err)
	}
	if v := Version(); !strings.HasPrefix(v, "1.") {
		t.Fatalf("Version() = %q", v)
	}
	dir := testutil.Model(t, "tiny")
	tok := filepath.Join(testutil.RepoRoot(t), ".cache", "tokenizers", "bert-uncased.json")
	dir16 := testutil.GenModel(t, "tiny16", "gen_bert.py", "--preset", "tiny", "--seed", "1", "--tokenizer", tok, "--output-dtype", "f16")
	names := []string{"input_ids", "attention_mask", "token_type_ids"}
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	byPath, err := NewSession(SessionConfig{Path: filepath.Join(dir, "model.onnx"), Inputs: names, Outputs: []string{"last_hidden_state"}, IntraOp: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer byPath.Destroy()
	byBytes, err := NewSession(SessionConfig{Model: model, Inputs: names, Outputs: []string{"last_hidden_state"}, IntraOp: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer byBytes.Destroy()
	s16, err := NewSession(SessionConfig{Path: filepath.Join(dir16, "model.onnx"), Inputs: names, Outputs: []string{"last_hidden_state"}, IntraOp: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s16.Destroy()

	ids := [][]int64{{101, 2054, 2003, 1996, 3007, 102}, {101, 7592, 102, 0, 0, 0}} // second row padded
	const B, S = 2, 6
	var flat, mask []int64
	for _, r := range ids {
		flat = append(flat, r...)
		for _, v := range r {
			mask = append(mask, map[bool]int64{true: 1, false: 0}[v != 0])
		}
	}
	var ts Tensors
	defer ts.Release()
	inputs := func() []Value {
		a, err1 := NewTensor(&ts, NewShape(B, S), flat)
		b, err2 := NewTensor(&ts, NewShape(B, S), mask)
		c, err3 := NewTensor(&ts, NewShape(B, S), make([]int64, B*S))
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		return []Value{a, b, c}
	}
	alloc := []Value{nil}
	if err := byPath.Run(inputs(), alloc); err != nil {
		t.Fatal(err)
	}
	defer alloc[0].Destroy()
	got, ok := alloc[0].(*Tensor[float32])
	if !ok || ElemType(alloc[0]) != "float32" {
		t.Fatalf("ORT-allocated output is %T (%s), want *Tensor[float32]", alloc[0], ElemType(alloc[0]))
	}
	shape := got.GetShape()
	if len(shape) != 3 || shape[0] != B || shape[1] != S {
		t.Fatalf("output shape %v", shape)
	}
	H := int(shape[2])
	buf := make([]float32, B*S*H)
	out, err := NewTensor(&ts, NewShape(B, S, int64(H)), buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := byBytes.Run(inputs(), []Value{out}); err != nil {
		t.Fatal(err)
	}
	for i, v := range got.GetData() {
		if v != buf[i] {
			t.Fatalf("value %d: ORT-allocated %v, Go buffer %v", i, v, buf[i])
		}
	}
	buf16 := make([]uint16, B*S*H)
	out16, err := NewFloat16Tensor(&ts, NewShape(B, S, int64(H)), buf16)
	if err != nil {
		t.Fatal(err)
	}
	if err := s16.Run(inputs(), []Value{out16}); err != nil {
		t.Fatal(err)
	}
	if ElemType(out16) != "float16" {
		t.Fatalf("ElemType of a float16 tensor: %s", ElemType(out16))
	}
	for i, h := range buf16 {
		f := float16.Frombits(h).Float32()
		if d := math.Abs(float64(f - buf[i])); d > 1e-3*max(1, math.Abs(float64(buf[i]))) {
			t.Fatalf("float16 output %d: %v, float32 %v", i, f, buf[i])
		}
	}

	// Mean pooling over the attended tokens against gen_bert.py's reference.
	var ref struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	testutil.RunReference(t, "gen_bert.py", dir, map[string]any{"input_ids": [][]int64{ids[0], ids[1][:3]}}, &ref)
	for b := range B {
		n := 0
		acc := make([]float64, H)
		for s := range S {
			if mask[b*S+s] == 0 {
				continue
			}
			n++
			for d := range H {
				acc[d] += float64(buf[(b*S+s)*H+d])
			}
		}
		var ss float64
		for d := range acc {
			acc[d] /= float64(n)
			ss += acc[d] * acc[d]
		}
		for d := range acc {
			if diff := math.Abs(acc[d]/math.Sqrt(ss) - ref.Embeddings[b][d]); diff > 1e-4 {
				t.Fatalf("row %d dim %d: ORT %v, numpy %v", b, d, acc[d]/math.Sqrt(ss), ref.Embeddings[b][d])
			}
		}
	}

	// Errors, not crashes.
	if err := byPath.Run(inputs()[:2], alloc[:1]); err == nil {
		t.Error("Run with 2 of 3 inputs succeeded")
	}
	bad, _ := NewTensor(&ts, NewShape(1, 1), []int64{99999999})
	if err := byPath.Run([]Value{bad, bad, bad}, []Value{nil}); err == nil {
		t.Error("Run with an out-of-vocabulary id succeeded")
	}
	if _, err := NewSession(SessionConfig{Path: filepath.Join(dir, "missing.onnx"), Inputs: names, Outputs: []string{"x"}, IntraOp: 1}); err == nil {
		t.Error("NewSession of a missing file succeeded")
	}
	if _, err := NewTensor(&ts, NewShape(0), []int64{}); err == nil {
		t.Error("an empty tensor was accepted")
	}
}

// TestCheckCUDA: a CPU-only library is named as such with make gpu-setup;
// with the provider files beside the library, the first CUDA 13 library
// that cannot be found is named with the folders searched and where it
// comes from; a library found in $RLSEARCH_CUDA_LIB_PATH is taken from
// there and the next one is named; and NewSession with CUDA fails with
// ErrNoCUDAProvider instead of running on the CPU.
func TestCheckCUDA(t *testing.T) {
	cpuLib := testutil.ORTLib(t)
	err := CheckCUDA(cpuLib, 0)
	if !errors.Is(err, ErrNoCUDAProvider) || !strings.Contains(err.Error(), ProviderCUDALib) || !strings.Contains(err.Error(), "make gpu-setup") {
		t.Fatalf("CheckCUDA(CPU build): %v", err)
	}
	t.Logf("CPU build: %v", err)

	// A directory laid out as make gpu-setup lays it out (the files only
	// have to exist for this check).
	gpu := t.TempDir()
	for _, f := range []string{"libonnxruntime.so.1", ProviderCUDALib, ProviderSharedLib} {
		if err := os.WriteFile(filepath.Join(gpu, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	libs := t.TempDir()
	t.Setenv(EnvCUDALibPath, libs)
	t.Setenv("LD_LIBRARY_PATH", "")
	if err := loadCUDALib("libcudart.so.13", nil); err == nil {
		t.Skip("this machine has a CUDA 13 runtime on the loader path")
	}
	err = checkCUDA(filepath.Join(gpu, "libonnxruntime.so.1"), 0)
	if !errors.Is(err, ErrNoCUDAProvider) || !strings.Contains(err.Error(), "libcudart.so.13") || !strings.Contains(err.Error(), "nvidia/cuda_runtime/lib") || !strings.Contains(err.Error(), libs) {
		t.Fatalf("no CUDA runtime: %v", err)
	}
	t.Logf("no CUDA runtime: %v", err)
	// A stand-in for libcudart.so.13 in $RLSEARCH_CUDA_LIB_PATH (any
	// loadable library): the search finds it and names the next one.
	libm := "/lib/x86_64-linux-gnu/libm.so.6"
	if _, err := os.Stat(libm); err != nil {
		t.Skipf("no %s to stand in for libcudart", libm)
	}
	if err := os.Symlink(libm, filepath.Join(libs, "libcudart.so.13")); err != nil {
		t.Fatal(err)
	}
	err = checkCUDA(filepath.Join(gpu, "libonnxruntime.so.1"), 0)
	if !errors.Is(err, ErrNoCUDAProvider) || !strings.Contains(err.Error(), "libcublasLt.so.13") || !strings.Contains(err.Error(), "nvidia/cublas/lib") {
		t.Fatalf("with libcudart in %s: %v", EnvCUDALibPath, err)
	}

	if err := Init(cpuLib); err != nil {
		t.Fatal(err)
	}
	dir := testutil.Model(t, "tiny")
	s, err := NewSession(SessionConfig{Path: filepath.Join(dir, "model.onnx"), Inputs: []string{"input_ids"}, Outputs: []string{"last_hidden_state"}, IntraOp: 1, CUDA: true})
	if s != nil || !errors.Is(err, ErrNoCUDAProvider) {
		t.Fatalf("NewSession with CUDA on the CPU build: %v, %v, want ErrNoCUDAProvider", s, err)
	}
}

func TestMain(m *testing.M) { testutil.Main(m) }
