package ann

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// mixedWidths is a batch of 64 widths as RL traffic mixes them: mostly
// top-3 and top-10, some wide candidate pools (50, 200, 1,000).
func mixedWidths(rng *rand.Rand, n int) []int {
	ladder := []int{3, 3, 3, 3, 10, 10, 10, 50, 200, 1000}
	ks := make([]int, n)
	for i := range ks {
		ks[i] = ladder[rng.Intn(len(ladder))]
	}
	return ks
}

// TestSearchWidthsEqualsAlone: every list of SearchWidths equals Search of
// that row alone at that width, on HNSW (approximate: the candidate list
// is max(EfSearch, k)) and on exact flat search, at awkward widths.
func TestSearchWidthsEqualsAlone(t *testing.T) {
	const n, dim = 3000, 16
	rng := rand.New(rand.NewSource(7))
	vecs := clustered(rng, n, dim, 20, 0.3)
	h, err := NewHNSW(context.Background(), vecs, dim, HNSWConfig{M: 8, EfConstruction: 40, EfSearch: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	flat, err := NewFlat(vecs, dim, FP32)
	if err != nil {
		t.Fatal(err)
	}
	scan, err := flat.Int8Scan(0)
	if err != nil {
		t.Fatal(err)
	}
	q := clustered(rng, 40, dim, 20, 0.3)
	ks := mixedWidths(rng, 40)
	ks[0], ks[1], ks[2] = 0, 1, n+1
	for name, ix := range map[string]Index{"hnsw": h, "flat": flat, "flat int8 scan": scan} {
		got, err := SearchWidths(context.Background(), ix, q, ks)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range ks {
			alone, err := ix.Search(context.Background(), q[i*dim:(i+1)*dim], k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[i], alone[0]) {
				t.Errorf("%s: row %d at k=%d: batched list differs from the row searched alone (%d vs %d hits)", name, i, k, len(got[i]), len(alone[0]))
			}
		}
	}
	if Exact(h) || !Exact(flat) || Exact(scan) {
		t.Errorf("Exact(hnsw) = %v, Exact(flat) = %v, Exact(int8 scan) = %v; want false, true, false", Exact(h), Exact(flat), Exact(scan))
	}
}

// BenchmarkMixedWidths compares the ways of answering one batch of 64
// queries with mixed widths (mixedWidths) on HNSW (efSearch 64):
//
//   - maxk: one Search at the largest width, cut (the batcher before issue
//     34: answers depend on batch-mates);
//   - perquery: SearchWidths, every query at its own width in one pass
//     (what the batcher does now);
//   - groupk: one Search per distinct width (what a retriever without
//     RetrieveWidths gets; in a server each group is also an encoder call);
//   - ef1000: efSearch raised to 1,000 for every query, so that ef no
//     longer depends on k and cutting would be exact.
func BenchmarkMixedWidths(b *testing.B) {
	const n, dim, nq = 20000, 64, 64
	rng := rand.New(rand.NewSource(1))
	vecs := clustered(rng, n, dim, 100, 0.3)
	h, err := NewHNSW(context.Background(), vecs, dim, HNSWConfig{M: 16, EfConstruction: 100, EfSearch: 64, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	q := clustered(rng, nq, dim, 100, 0.3)
	ks := mixedWidths(rng, nq)
	ctx := context.Background()
	kmax := slices.Max(ks)
	run := map[string]func() ([][]rlsearch.Hit, error){
		"maxk":     func() ([][]rlsearch.Hit, error) { return h.Search(ctx, q, kmax) },
		"perquery": func() ([][]rlsearch.Hit, error) { return SearchWidths(ctx, h, q, ks) },
		"groupk": func() ([][]rlsearch.Hit, error) {
			var out [][]rlsearch.Hit
			for _, k := range []int{3, 10, 50, 200, 1000} {
				var rows []float32
				for i, ki := range ks {
					if ki == k {
						rows = append(rows, q[i*dim:(i+1)*dim]...)
					}
				}
				if len(rows) == 0 {
					continue
				}
				got, err := h.Search(ctx, rows, k)
				if err != nil {
					return nil, err
				}
				out = append(out, got...)
			}
			return out, nil
		},
	}
	for _, name := range []string{"maxk", "perquery", "groupk"} {
		b.Run(fmt.Sprintf("%s/n=%d/dim=%d/nq=%d", name, n, dim, nq), func(b *testing.B) {
			for b.Loop() {
				if _, err := run[name](); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
	h.SetEfSearch(1000) // after the others: SetEfSearch is not safe during searches
	b.Run(fmt.Sprintf("ef1000/n=%d/dim=%d/nq=%d", n, dim, nq), func(b *testing.B) {
		for b.Loop() {
			if _, err := SearchWidths(ctx, h, q, ks); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
	})
}
