package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
	"github.com/rlsearch/rlsearch/transformer"
)

// TestGPUProvider: Provider "gpu" runs package transformer's forward pass
// on the GPU and agrees with the ONNX Runtime CPU encoder (cosine ≥ 0.999
// per text, the bar); without a usable GPU Open fails, never falls
// back (REQUIRE_GPU=1 makes that a failure).
func TestGPUProvider(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e, err := Open(Config{Dir: dir, Provider: "gpu", ORTLib: encTestORTLibPath(t)})
	if err != nil {
		if !errors.Is(err, transformer.ErrNoGPU) {
			t.Fatalf("Open(gpu) without a usable GPU: %v, want an error wrapping transformer.ErrNoGPU", err)
		}
		cudatest.SkipUnusable(t, err)
	}
	defer e.Close()
	cpu := encOpen(t, Config{Dir: dir, Sessions: 1})
	dev, why := e.Placement()
	t.Logf("placement %s: %s", dev, why)
	if !strings.HasPrefix(dev, "gpu:") {
		t.Fatalf("Placement device %q", dev)
	}
	texts := encParityTexts(t)
	for _, passages := range []bool{false, true} {
		g, c := encodeBoth(t, e, cpu, texts, passages)
		d := e.Dim()
		for i := range texts {
			if cs := testutil.Cosine(g[i*d:(i+1)*d], c[i*d:(i+1)*d]); !(cs >= 0.999) {
				t.Fatalf("text %d: GPU vs ORT CPU cosine %.5f", i, cs)
			}
		}
	}
}

// encodeBoth encodes texts as passages (else queries) on a and on b,
// failing t on an error, and returns both [len(texts), Dim()] outputs.
func encodeBoth(t *testing.T, a, b *Encoder, texts []string, passages bool) (x, y []float32) {
	t.Helper()
	enc := (*Encoder).EncodeQueries
	if passages {
		enc = (*Encoder).EncodePassages
	}
	x, err := enc(a, context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	y, err = enc(b, context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

// TestAutoProvider: "auto" uses the GPU when one is usable, else ONNX
// Runtime on the CPU with the reason in Placement and output equal to the
// CPU encoder's.
func TestAutoProvider(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Provider: "auto", Sessions: 1, Logf: func(string, ...any) {}})
	dev, why := e.Placement()
	t.Logf("auto: %s: %s", dev, why)
	if _, err := transformer.ProbeGPU(0); err == nil {
		if !strings.HasPrefix(dev, "gpu:") {
			t.Fatalf("a usable GPU but auto chose %s (%s)", dev, why)
		}
		return
	}
	if dev != "cpu" || !strings.HasPrefix(why, "auto: ") {
		t.Fatalf("no GPU: Placement %q, %q; want cpu with the auto reason", dev, why)
	}
	cpu := encOpen(t, Config{Dir: dir, Sessions: 1})
	a, err := e.EncodeQueries(context.Background(), []string{"who wrote hamlet"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cpu.EncodeQueries(context.Background(), []string{"who wrote hamlet"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("auto on the CPU differs from the CPU encoder at %d", i)
		}
	}
}

// TestConfigHashIgnoresWeightFormat: the hash a shard records is that of
// rlsearch.json alone, so the same model served from safetensors on the
// GPU matches an index built with its ONNX export on the CPU.
func TestConfigHashIgnoresWeightFormat(t *testing.T) {
	dir := encGenModel(t, "tiny")
	h1, err := ConfigHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	for _, f := range []string{ConfigFile, TokenizerFile, transformer.ConfigFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(other, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(other, transformer.SafetensorsFile), []byte("not read by ConfigHash"), 0o644)
	h2, err := ConfigHash(other)
	if err != nil {
		t.Fatal(err)
	}
	if h1 != h2 {
		t.Fatalf("ConfigHash %x with model.onnx, %x with model.safetensors", h1, h2)
	}
}

// TestGPUProviderEmulated runs Provider "gpu" end to end — config.json,
// weights from model.onnx's initializers, fp16 upload, the forward pass's
// GEMMs and kernels, pooling — on the CPU emulator of kernels/nn.cu, and
// compares it with the ONNX Runtime CPU encoder on queries and passages
// (one truncated at MaxLength).
func TestGPUProviderEmulated(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e, err := Open(Config{Dir: dir, Provider: "gpu", gpuExec: kernelemu.Open(t), SkipCanary: true}) // the canary has its own tests
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if dev, why := e.Placement(); dev != "gpu:0" || !strings.Contains(why, "emulator") {
		t.Fatalf("Placement %q, %q", dev, why)
	}
	cpu := encOpen(t, Config{Dir: dir, Sessions: 1})
	all := encParityTexts(t)
	texts := append(all[:4:4], "", all[len(all)-1]) // short, empty, and one cut at 256 tokens
	var worst = 1.0
	for _, kind := range []string{"query", "passage"} {
		g, c := encodeBoth(t, e, cpu, texts, kind == "passage")
		d := e.Dim()
		for i := range texts {
			if texts[i] == "" {
				for _, v := range g[i*d : (i+1)*d] {
					if v != 0 {
						t.Fatal("empty text: non-zero vector")
					}
				}
				continue
			}
			cs := testutil.Cosine(g[i*d:(i+1)*d], c[i*d:(i+1)*d])
			worst = min(worst, cs)
			if !(cs >= 0.9999) {
				t.Fatalf("%s %d: emulated GPU vs ORT cosine %.6f", kind, i, cs)
			}
		}
	}
	t.Logf("min cosine to ORT %.7f", worst)
}
