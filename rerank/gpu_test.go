package rerank

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
	"github.com/rlsearch/rlsearch/transformer"
)

// TestGPUProvider: Provider "gpu" scores the exact prompts of the CPU path
// on the GPU with yes-probabilities within 2e-3 of ONNX Runtime's; without
// a usable GPU Open fails instead of falling back.
func TestGPUProvider(t *testing.T) {
	dir := qwen3Model(t, "last")
	g, err := Open(Config{Dir: dir, Provider: "gpu", ORTLib: testutil.ORTLib(t)})
	if err != nil {
		if !errors.Is(err, transformer.ErrNoGPU) {
			t.Fatalf("Open(gpu) without a usable GPU: %v, want an error wrapping transformer.ErrNoGPU", err)
		}
		cudatest.SkipUnusable(t, err)
	}
	defer g.Close()
	dev, why := g.Placement()
	t.Logf("placement %s: %s", dev, why)
	cpu := openTest(t, Config{Dir: dir, Sessions: 1})
	q := "who built the bridges of Paris?"
	docs := testDocs(20)
	a, b := scoreBoth(t, g, cpu, q, docs)
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); !(d <= 2e-3) {
			t.Fatalf("doc %d: GPU P(yes) %v, ORT %v", i, a[i], b[i])
		}
	}
}

// scoreBoth is g's and cpu's scores of docs for q.
func scoreBoth(t *testing.T, g, cpu *Reranker, q string, docs []string) (a, b []float32) {
	t.Helper()
	a, err := g.score(context.Background(), q, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err = cpu.score(context.Background(), q, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestAutoProviderAndCrossEncoder: "auto" ends on the CPU without a GPU
// (saying why); a cross-encoder asked onto the GPU is refused (not
// implemented there), and under "auto" it runs on the CPU.
func TestAutoProviderAndCrossEncoder(t *testing.T) {
	dir := qwen3Model(t, "last")
	r := openTest(t, Config{Dir: dir, Sessions: 1, Provider: "auto"})
	dev, why := r.Placement()
	t.Logf("auto: %s: %s", dev, why)
	if _, err := transformer.ProbeGPU(0); err != nil && (dev != "cpu" || !strings.HasPrefix(why, "auto: ")) {
		t.Fatalf("no GPU: Placement %q, %q", dev, why)
	}
	ce := crossModel(t, 1)
	if _, err := Open(Config{Dir: ce, Provider: "gpu", ORTLib: testutil.ORTLib(t)}); err == nil || !strings.Contains(err.Error(), "implements qwen3-reranker") {
		t.Fatalf("cross-encoder on the GPU: %v", err)
	}
	c := openTest(t, Config{Dir: ce, Sessions: 1, Provider: "auto"})
	if dev, _ := c.Placement(); dev != "cpu" {
		t.Fatalf("cross-encoder under auto runs on %s", dev)
	}
	if err := (Config{Dir: "x", Provider: "tpu"}).Validate(); err == nil || !strings.Contains(err.Error(), "Config.Provider") {
		t.Fatalf("Validate(tpu): %v", err)
	}
}

// TestGPUProviderEmulated runs Provider "gpu" end to end (config.json,
// ONNX initializers matched by graph order, fp16 upload, the packed
// forward pass, the batching queue) on the CPU emulator of kernels/nn.cu:
// yes-probabilities within 2e-3 of ONNX Runtime's for the same prompts.
func TestGPUProviderEmulated(t *testing.T) {
	dir := qwen3Model(t, "last")
	g, err := Open(Config{Dir: dir, Provider: "gpu", MaxLength: 200, gpuExec: kernelemu.Open(t), SkipCanary: true}) // the canary has its own tests
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if dev, why := g.Placement(); dev != "gpu:0" || !strings.Contains(why, "emulator") || g.cfg.BatchSize != DefaultGPUBatchSize {
		t.Fatalf("Placement %q, %q, batch size %d", dev, why, g.cfg.BatchSize)
	}
	cpu := openTest(t, Config{Dir: dir, Sessions: 1, MaxLength: 200})
	q := "who built the bridges of Paris?"
	docs := append(testDocs(5), "", longText(300))
	a, b := scoreBoth(t, g, cpu, q, docs)
	var worst float64
	for i := range a {
		d := math.Abs(float64(a[i] - b[i]))
		worst = max(worst, d)
		if !(d <= 2e-3) {
			t.Fatalf("doc %d: emulated GPU P(yes) %v, ORT %v", i, a[i], b[i])
		}
	}
	t.Logf("max |ΔP(yes)| to ORT %.2g over %d pairs", worst, len(docs))
}
