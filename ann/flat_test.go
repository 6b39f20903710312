package ann

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		for r := range all {
			v := f.Vector(r)
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
	for _, dim := range []int{1, 3, 31, 32, 33, 384} {
		for _, n := range []int{1, 7, 300, 1000} {
			for _, dt := range []DType{FP32, FP16} {
				f, err := NewFlat(randVecs(rng, n, dim), dim, dt)
				if err != nil {
					t.Fatal(err)
				}
				q := randVecs(rng, 9, dim) // 9 queries: two blocks of four and a remainder
				for _, k := range []int{0, 1, 10, n, n + 1} {
					t.Run(fmt.Sprintf("dim=%d/n=%d/%v/k=%d", dim, n, dt, k), func(t *testing.T) {
						got, err := f.Search(context.Background(), q, k)
						if err != nil {
							t.Fatal(err)
						}
						want := naive(f, q, k)
						for qi := range want {
							if len(got[qi]) != len(want[qi]) {
								t.Fatalf("query %d: %d hits, want %d", qi, len(got[qi]), len(want[qi]))
							}
							for i := range want[qi] {
								g, w := got[qi][i], want[qi][i]
								// Summation order differs from the oracle: allow float rounding, but rows must agree
								// unless two scores are within rounding of each other.
								if g.Row != w.Row && abs(g.Score-w.Score) > 1e-4*(1+abs(w.Score)) {
									t.Fatalf("query %d rank %d: got %+v, want %+v", qi, i, g, w)
								}
							}
						}
					})
				}
			}
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
	v := make([]float32, 600*4)
	for i := range v {
		v[i] = 0.5
	}
	f, _ := NewFlat(v, 4, FP16)
	got, err := f.Search(context.Background(), []float32{1, 1, 1, 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range got[0] {
		if h.Row != int32(i) {
			t.Fatalf("rank %d is row %d, want %d (ties by ascending row)", i, h.Row, i)
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

func writeShard(t testing.TB, dir string, vecs []float32, dim int, dt DType) string {
	t.Helper()
	path := filepath.Join(dir, "dense.shard")
	w, err := CreateShard(path, Header{DType: dt, Dim: dim, Normalized: true, EncoderID: "tiny", ConfigHash: 42})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(vecs); i += 5 * dim { // several appends
		if err := w.Append(vecs[i:min(i+5*dim, len(vecs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestShardRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, dt := range []DType{FP32, FP16} {
		for _, n := range []int{0, 1, 23} {
			vecs := randVecs(rng, n, 33)
			path := writeShard(t, t.TempDir(), vecs, 33, dt)
			f, err := ReadShard(path)
			if err != nil {
				t.Fatal(err)
			}
			h := f.Header()
			if h.Count != n || h.Dim != 33 || h.DType != dt || !h.Normalized || h.EncoderID != "tiny" || h.ConfigHash != 42 {
				t.Fatalf("header %+v", h)
			}
			want, _ := NewFlat(vecs, 33, dt)
			for r := 0; r < n; r++ {
				if !slices.Equal(f.Vector(r), want.Vector(r)) {
					t.Fatalf("%v row %d differs after round trip", dt, r)
				}
			}
		}
	}
}

func TestShardCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	good, _ := os.ReadFile(writeShard(t, t.TempDir(), randVecs(rng, 10, 8), 8, FP16))
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
		want   string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-7] }, "truncated"},
		{"short", func(b []byte) []byte { return b[:20] }, "header shorter"},
		{"magic", func(b []byte) []byte { b[1] = 'x'; return b }, "magic at offset 0"},
		{"dtype", func(b []byte) []byte { b[12] = 9; return b }, "dtype 9 at offset 12"},
		{"payload", func(b []byte) []byte { b[70] ^= 1; return b }, "checksum"},
		{"count", func(b []byte) []byte { b[16] = 11; return b }, "implies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s")
			os.WriteFile(p, tc.mutate(slices.Clone(good)), 0o644)
			_, err := ReadShard(p)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrCorrupt containing %q", err, tc.want)
			}
		})
	}
}

func FuzzReadShard(f *testing.F) {
	dir := f.TempDir()
	good, _ := os.ReadFile(writeShard(f, dir, randVecs(rand.New(rand.NewSource(5)), 4, 3), 3, FP32))
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s")
		os.WriteFile(p, data, 0o644)
		if fl, err := ReadShard(p); err == nil {
			fl.Search(context.Background(), make([]float32, fl.Dim()), 3)
		}
	})
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
