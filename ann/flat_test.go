package ann

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func randVecs(rng *rand.Rand, n, d int) []float32 {
	v := make([]float32, n*d)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// naive is the oracle: every row scored with a plain loop, full sort.
func naive(f *Flat, q []float32, k int) [][]rlsearch.Hit {
	d := f.Dim()
	out := make([][]rlsearch.Hit, len(q)/d)
	for qi := range out {
		all := make([]rlsearch.Hit, f.Len())
		vecs := f.Vectors(0, f.Len())
		for r := range all {
			v := vecs[r*d : (r+1)*d]
			var s float32
			for j := range v {
				s += q[qi*d+j] * v[j]
			}
			all[r] = rlsearch.Hit{Row: int32(r), Score: s}
		}
		slices.SortFunc(all, cmpHit)
		out[qi] = all[:min(k, len(all))]
	}
	return out
}

func TestSearchMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, dim := range []int{1, 3, 31, 32, 33, 384, 768} {
		for _, n := range []int{1, 7, 300, 1000} {
			if dim == 768 && n == 1000 {
				continue
			}
			for _, dt := range []DType{FP32, FP16, INT8} {
				f, err := NewFlat(randVecs(rng, n, dim), dim, dt)
				if err != nil {
					t.Fatal(err)
				}
				q := randVecs(rng, 9, dim) // 9 queries: two blocks of four and a remainder
				all := naive(f, q, n)      // the oracle's full ranking; its prefixes answer every k
				for _, k := range []int{0, 1, 10, n, n + 1} {
					want := make([][]rlsearch.Hit, len(all))
					for i := range all {
						want[i] = all[i][:min(k, n)]
					}
					for _, kern := range tileKernels {
						f.kernel = kern
						t.Run(fmt.Sprintf("dim=%d/n=%d/%v/%s/k=%d", dim, n, dt, kern.name, k), func(t *testing.T) {
							got, err := f.Search(context.Background(), q, k)
							if err != nil {
								t.Fatal(err)
							}
							checkHits(t, got, want)
						})
					}
				}
			}
		}
	}
}

// checkHits compares hit lists with the oracle's: same lengths, and the
// same rows unless two scores are within float rounding of each other (the
// kernels sum in a different order than the oracle).
func checkHits(t *testing.T, got, want [][]rlsearch.Hit) {
	t.Helper()
	for qi := range want {
		if len(got[qi]) != len(want[qi]) {
			t.Fatalf("query %d: %d hits, want %d", qi, len(got[qi]), len(want[qi]))
		}
		for i := range want[qi] {
			g, w := got[qi][i], want[qi][i]
			if g.Row != w.Row && abs(g.Score-w.Score) > 1e-4*(1+abs(w.Score)) {
				t.Fatalf("query %d rank %d: got %+v, want %+v", qi, i, g, w)
			}
			if abs(g.Score-w.Score) > 1e-3*(1+abs(w.Score)) {
				t.Fatalf("query %d rank %d: score %v, want %v", qi, i, g.Score, w.Score)
			}
		}
		if !slices.IsSortedFunc(got[qi], cmpHit) {
			t.Fatalf("query %d: hits not sorted: %v", qi, got[qi])
		}
	}
}

func abs(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

func TestTiesBreakByRow(t *testing.T) {
	// 600 identical vectors (spanning several tiles and workers): ranks must be rows 0..k-1.
	for _, dim := range []int{4, 32} {
		v := make([]float32, 600*dim)
		for i := range v {
			v[i] = 0.5
		}
		f, _ := NewFlat(v, dim, FP16)
		for _, kern := range tileKernels {
			f.kernel = kern
			q := make([]float32, 5*dim)
			for i := range q {
				q[i] = 1
			}
			got, err := f.Search(context.Background(), q, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, hits := range got {
				for i, h := range hits {
					if h.Row != int32(i) {
						t.Fatalf("dim %d kernel %s: rank %d is row %d, want %d (ties by ascending row)", dim, kern.name, i, h.Row, i)
					}
				}
			}
		}
	}
}

func TestSearchErrors(t *testing.T) {
	f, _ := NewFlat(make([]float32, 8), 4, FP32)
	if _, err := f.Search(context.Background(), make([]float32, 5), 1); !errors.Is(err, ErrDim) {
		t.Errorf("len 5 query on dim 4: %v, want ErrDim", err)
	}
	if _, err := f.Search(context.Background(), make([]float32, 4), -1); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("k=-1: %v, want ErrBadInput", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Search(ctx, make([]float32, 4), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
}

func TestConcurrentSearchEqualsSerial(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	f, _ := NewFlat(randVecs(rng, 3000, 64), 64, FP16)
	qs := randVecs(rng, 64, 64)
	serial := make([][]rlsearch.Hit, 64)
	for i := range serial {
		r, err := f.Search(context.Background(), qs[i*64:(i+1)*64], 10)
		if err != nil {
			t.Fatal(err)
		}
		serial[i] = r[0]
	}
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := f.Search(context.Background(), qs[i*64:(i+1)*64], 10)
			if err != nil || !slices.Equal(r[0], serial[i]) {
				t.Errorf("query %d: concurrent result differs from serial (%v)", i, err)
			}
		}(i)
	}
	wg.Wait()
}

// TestFlatInt8Scan checks Int8Scan against exact search over the storage
// (fp32 and fp16): with as many extra candidates as rows, the scan's
// choice cannot matter, so rows and scores equal dotF32 over the stored
// rows ranked in full; at the default extra the answer is the same rows on
// random data; batch 1 and the whole batch give the same bytes.
func TestFlatInt8Scan(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, dim := range []int{3, 33, 128, 768} {
		const n = 700
		vecs := randVecs(rng, n, dim)
		q := randVecs(rng, 9, dim)
		for _, dt := range []DType{FP32, FP16} {
			exact, _ := NewFlat(vecs, dim, dt)
			full, err := exact.Int8Scan(n)
			if err != nil {
				t.Fatal(err)
			}
			def, err := exact.Int8Scan(0)
			if err != nil {
				t.Fatal(err)
			}
			if ok, extra := def.Int8Scanned(); !ok || extra != DefaultRerankExtra {
				t.Fatalf("Int8Scanned() = %v, %d: want true, %d", ok, extra, DefaultRerankExtra)
			}
			if ok, _ := exact.Int8Scanned(); ok || def.Len() != n || def.Header().DType != dt {
				t.Fatalf("Int8Scan changed its receiver or the header")
			}
			stored := exact.Vectors(0, n)
			for _, k := range []int{1, 10, n, n + 3} {
				got, err := full.Search(context.Background(), q, k)
				if err != nil {
					t.Fatal(err)
				}
				for qi, hs := range got {
					all := make([]rlsearch.Hit, n)
					for r := range all {
						all[r] = rlsearch.Hit{Row: int32(r), Score: dotF32(q[qi*dim:(qi+1)*dim], stored[r*dim:(r+1)*dim])}
					}
					slices.SortFunc(all, cmpHit)
					if want := all[:min(k, n)]; !slices.Equal(hs, want) {
						t.Fatalf("dim %d %v k %d query %d: got %v, want exact %v", dim, dt, k, qi, hs[:min(3, len(hs))], want[:3])
					}
				}
				dh, err := def.Search(context.Background(), q, k)
				if err != nil {
					t.Fatal(err)
				}
				ex, _ := exact.Search(context.Background(), q, k)
				for qi := range dh {
					if k <= 10 && !slices.EqualFunc(dh[qi], ex[qi], func(a, b rlsearch.Hit) bool { return a.Row == b.Row }) {
						t.Errorf("dim %d %v k %d query %d: default extra rows %v, exact %v", dim, dt, k, qi, dh[qi], ex[qi])
					}
					one, err := def.Search(context.Background(), q[qi*dim:(qi+1)*dim], k)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(one[0], dh[qi]) {
						t.Fatalf("dim %d %v k %d query %d: batch 1 differs from batch 9", dim, dt, k, qi)
					}
				}
			}
		}
	}
	i8, _ := NewFlat(make([]float32, 8), 4, INT8)
	f32, _ := NewFlat(make([]float32, 8), 4, FP32)
	for name, err := range map[string]error{
		"int8 storage": func() error { _, err := i8.Int8Scan(0); return err }(),
		"extra -1":     func() error { _, err := f32.Int8Scan(-1); return err }(),
	} {
		if !errors.Is(err, rlsearch.ErrBadInput) {
			t.Errorf("Int8Scan, %s: %v, want ErrBadInput", name, err)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	const n, dim = 18175, 384
	f, _ := NewFlat(randVecs(rng, n, dim), dim, FP16)
	for _, batch := range []int{1, 64} {
		q := randVecs(rng, batch, dim)
		b.Run(fmt.Sprintf("n=%d/dim=%d/batch=%d/k=10", n, dim, batch), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := f.Search(context.Background(), q, 10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

// BenchmarkFlatInt8Scan is batch-1 search over 10,000 random rows: exact
// over fp32 and fp16 storage, and Int8Scan over fp32 storage.
func BenchmarkFlatInt8Scan(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	for _, dim := range []int{128, 768} {
		const n = 10000
		vecs := randVecs(rng, n, dim)
		q := randVecs(rng, 1, dim)
		f32, _ := NewFlat(vecs, dim, FP32)
		f16, _ := NewFlat(vecs, dim, FP16)
		scan, err := f32.Int8Scan(0)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			f    *Flat
		}{{"fp32", f32}, {"fp16", f16}, {"fp32+int8scan", scan}} {
			b.Run(fmt.Sprintf("dim=%d/%s", dim, c.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := c.f.Search(context.Background(), q, 10); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			})
		}
	}
}
