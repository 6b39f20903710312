package ann

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// readFvecs reads a whole .fvecs file (ann/vecfile).
func readFvecs(t *testing.T, path string) ([]float32, int) {
	t.Helper()
	r, err := vecfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in := r.Info()
	out := make([]float32, in.Count*in.Dim)
	for got := 0; ; {
		n, err := r.Read(out[got*in.Dim:])
		got += n
		if errors.Is(err, io.EOF) || got == in.Count {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, in.Dim
}

// TestGPUInt8RecallBGE states what the int8 GPU storage (GPUConfig.Int8)
// costs in ranking on real text embeddings: bge-base-en-v1.5, 5,544 × 768
// unit vectors and 500 queries (../shared/data/vectors/
// beir_bge_base_queries; the first 100 under -race). The int8 index runs the
// GPU path's host code and arithmetic on a reference device (fp16 q∘scale,
// integer codes, fp32 sums, the offset term per query) over an int8 shard
// quantised as `rlsearch index --dtype int8` does (FitInt8: per-dimension
// min/max); its top-10 is compared with exact search over the fp16 shard
// (what the GPU holds without Int8) and over fp32. Bars: recall@10 against
// fp16 exact ≥ 0.99 (measured 0.997, see ann/README.md), and the int8 GPU
// path equals Flat.Search over the same int8 shard on ≥ 99% of the top-10
// rows (they differ only by the fp16 rounding of q∘scale).
func TestGPUInt8RecallBGE(t *testing.T) {
	dir := filepath.Join(testutil.DataDir(t), "vectors", "beir_bge_base_queries")
	base, dim := readFvecs(t, filepath.Join(dir, "base.fvecs"))
	q, qdim := readFvecs(t, filepath.Join(dir, "query.fvecs"))
	if qdim != dim {
		t.Fatalf("query dim %d, base dim %d", qdim, dim)
	}
	nq := len(q) / dim
	if gpuRace { // the reference device's loops are ~10× slower under -race: 100 of the queries
		nq = 100
		q = q[:nq*dim]
	}
	ctx := context.Background()
	search := func(name string, idx interface {
		Search(context.Context, []float32, int) ([][]rlsearch.Hit, error)
	}) [][]rlsearch.Hit {
		hits, err := idx.Search(ctx, q, 10)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return hits
	}
	f32, err := NewFlat(base, dim, FP32)
	if err != nil {
		t.Fatal(err)
	}
	f16, err := NewFlat(base, dim, FP16)
	if err != nil {
		t.Fatal(err)
	}
	i8, err := NewFlat(base, dim, INT8)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGPU(i8, GPUConfig{refDevices: 1, MaxBatch: 512, Int8: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	exact32, exact16, flat8, gpu8 := search("fp32", f32), search("fp16", f16), search("int8 flat", i8), search("int8 gpu", g)
	vs16, vs32 := recallAt(gpu8, exact16, 10), recallAt(gpu8, exact32, 10)
	f16vs32, same := recallAt(exact16, exact32, 10), recallAt(gpu8, flat8, 10)
	t.Logf("bge-base %d × %d, %d queries, k = 10: int8 GPU path recall@10 vs fp16 exact %.4f, vs fp32 exact %.4f; fp16 exact vs fp32 %.4f; int8 GPU path vs int8 Flat.Search %.4f",
		len(base)/dim, dim, nq, vs16, vs32, f16vs32, same)
	if vs16 < 0.99 {
		t.Errorf("int8 GPU recall@10 against fp16 exact %.4f < 0.99", vs16)
	}
	if same < 0.99 {
		t.Errorf("int8 GPU path and int8 Flat.Search share %.4f of the top-10 rows, want ≥ 0.99", same)
	}
}
