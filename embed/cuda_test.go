package embed

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

func TestProviderValidate(t *testing.T) {
	for _, tc := range []struct {
		p  string
		ok bool
	}{{"", true}, {"cpu", true}, {"cuda", true}, {"cuda:1", true}, {"cuda:-1", false}, {"gpu", true}, {"gpu:1", true},
		{"auto", true}, {"gpu:-1", false}, {"gpux", false}, {"cuda:x", false}} {
		t.Run(tc.p, func(t *testing.T) {
			err := Config{Dir: "m", Provider: tc.p}.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate(Provider %q) = %v, want ok=%v", tc.p, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "Config.Provider") {
				t.Fatalf("error %v does not name Config.Provider", err)
			}
		})
	}
}

// TestEncoderCUDA asks for ORT's CUDA execution provider. Where it cannot
// run (here: the CPU-only ORT that setup.sh installs, or no GPU or CUDA 13
// libraries) Open must fail with ortenv.ErrNoCUDAProvider naming what is
// missing, never fall back to the CPU (it did before issue 32); with the
// GPU build of ORT on a GPU machine (ONNXRUNTIME_LIB=.cache/ort-gpu/...)
// the output must agree with the CPU to cosine 0.999 and the canary pass.
func TestEncoderCUDA(t *testing.T) {
	dir := encGenModel(t, "tiny")
	lib := encTestORTLibPath(t)
	e, err := Open(Config{Dir: dir, Provider: "cuda", Sessions: 1, ORTLib: lib})
	if err != nil {
		if !errors.Is(err, ortenv.ErrNoCUDAProvider) {
			t.Fatalf("Open(cuda) where the CUDA provider cannot run: %v, want an error wrapping ortenv.ErrNoCUDAProvider", err)
		}
		if os.Getenv(cudatest.EnvRequireGPU) == "1" && strings.Contains(lib, "ort-gpu") {
			t.Fatalf("REQUIRE_GPU=1 with the GPU build of ORT: %v", err)
		}
		t.Logf("cuda unavailable, as it should say: %v", err)
		return
	}
	defer e.Close()
	cpu := encOpen(t, Config{Dir: dir, Sessions: 1})
	if dev, why := e.Placement(); dev != "cuda:0" || !e.CanaryReport().Passed {
		t.Fatalf("Placement %q, %q, canary %+v", dev, why, e.CanaryReport())
	}
	texts := []string{"who wrote the iliad", "capital of france", ""}
	a, err := e.EncodeQueries(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cpu.EncodeQueries(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Dim()
	for i := range texts[:2] {
		if c := testutil.Cosine(a[i*d:(i+1)*d], b[i*d:(i+1)*d]); !(c >= 0.999) {
			t.Fatalf("text %d: CUDA vs CPU cosine %.6f", i, c)
		}
	}
}
