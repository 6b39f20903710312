package ann

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
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
