package ann

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// BenchmarkFlatSearch measures exact search at the peer point
// (100k × 384 fp32, k = 10) for every kernel and dtype, batch 1 and 64.
func BenchmarkFlatSearch(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	const n, dim = 100_000, 384
	vecs := randVecs(rng, n, dim)
	for _, dt := range []DType{FP32, FP16, INT8} {
		f, _ := NewFlat(vecs, dim, dt)
		for _, kern := range tileKernels {
			f.kernel = kern
			for _, batch := range []int{1, 64} {
				q := randVecs(rng, batch, dim)
				b.Run(fmt.Sprintf("n=%d/dim=%d/%v/kernel=%s/batch=%d/k=10", n, dim, dt, kern.name, batch), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := f.Search(context.Background(), q, 10); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "queries/s")
				})
			}
		}
	}
}

// BenchmarkHNSWSearch measures HNSW queries/s and recall@10 against exact
// search on clustered unit vectors (20k × 128, 300 centres), per efSearch.
func BenchmarkHNSWSearch(b *testing.B) {
	rng := rand.New(rand.NewSource(8))
	const n, dim, nq = 20_000, 128, 500
	vecs := clustered(rng, n+nq, dim, 300, 0.15)
	base, q := vecs[:n*dim], vecs[n*dim:]
	flat, _ := NewFlat(base, dim, FP32)
	exact, _ := flat.Search(context.Background(), q, 10)
	h, err := NewHNSW(context.Background(), base, dim, HNSWConfig{M: 16, EfConstruction: 100, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, ef := range []int{16, 64, 256} {
		h.SetEfSearch(ef)
		b.Run(fmt.Sprintf("n=%d/dim=%d/M=16/efSearch=%d/k=10", n, dim, ef), func(b *testing.B) {
			var got [][]rlsearch.Hit
			for i := 0; i < b.N; i++ {
				if got, err = h.Search(context.Background(), q, 10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(recallAt(got, exact, 10), "recall@10")
		})
	}
}

// BenchmarkHNSWSharedStorage compares HNSW queries/s with the graph's own
// float32 copy against the same graph reading an fp16 or int8 shard
// (ShareVectors, what ann.Open serves), with and without int8 traversal.
func BenchmarkHNSWSharedStorage(b *testing.B) {
	rng := rand.New(rand.NewSource(8))
	const n, dim, nq = 20_000, 128, 500
	vecs := clustered(rng, n+nq, dim, 300, 0.15)
	base, q := vecs[:n*dim], vecs[n*dim:]
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		dt    DType // 0: own float32 copy
		int8  bool
		share bool
	}{
		{"own-fp32", FP16, false, false},
		{"shared-fp16", FP16, false, true},
		{"own-fp32+int8codes", FP16, true, false},
		{"shared-fp16+int8codes", FP16, true, true},
		{"shared-int8", INT8, true, true},
	} {
		flat, _ := NewFlat(base, dim, c.dt)
		exact, _ := flat.Search(ctx, q, 10)
		h, err := NewHNSW(ctx, flat.Vectors(0, n), dim, HNSWConfig{M: 16, EfConstruction: 100, EfSearch: 64, Seed: 1, Int8: c.int8})
		if err != nil {
			b.Fatal(err)
		}
		if c.share {
			if err := h.ShareVectors(flat); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("%s/n=%d/dim=%d/efSearch=64", c.name, n, dim), func(b *testing.B) {
			var got [][]rlsearch.Hit
			for i := 0; i < b.N; i++ {
				if got, err = h.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(recallAt(got, exact, 10), "recall@10")
		})
	}
}
