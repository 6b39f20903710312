package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestCompareKeyRowIsHitOrder: sorting (Key(score), row) pairs with
// CompareKeyRow gives rlsearch.CompareHits' order of the hits (the oracle),
// with ties, negative scores and -0 (one key with +0) among them.
func TestCompareKeyRowIsHitOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 7))
	vals := []float32{-2, -0.5, float32(math.Copysign(0, -1)), 0, 0.25, 1, 3, float32(math.Inf(1)), float32(math.Inf(-1))}
	for trial := range 200 {
		n := 1 + rng.IntN(40)
		hits := make([]rlsearch.Hit, n)
		for i := range hits {
			hits[i] = rlsearch.Hit{Row: int32(rng.IntN(1000)), Score: vals[rng.IntN(len(vals))]}
		}
		got := slices.Clone(hits)
		slices.SortStableFunc(got, func(a, b rlsearch.Hit) int { return CompareKeyRow(Key(a.Score), a.Row, Key(b.Score), b.Row) })
		want := slices.Clone(hits)
		for i := range want {
			if want[i].Score == 0 {
				want[i].Score = 0 // -0 → +0: one key
			}
		}
		slices.SortStableFunc(want, rlsearch.CompareHits)
		for i := range got {
			if Key(got[i].Score) != Key(want[i].Score) || got[i].Row != want[i].Row {
				t.Fatalf("trial %d position %d: %v, CompareHits order gives %v", trial, i, got[i], want[i])
			}
		}
	}
}
