package ann

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// clustered draws n unit vectors from a Gaussian mixture: centres uniform
// on the sphere, each vector its centre plus N(0, sigma²) noise per value,
// normalised.
func clustered(rng *rand.Rand, n, dim, centres int, sigma float64) []float32 {
	c := randVecs(rng, centres, dim)
	normalize(c, dim)
	v := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		ci := rng.Intn(centres)
		for j := 0; j < dim; j++ {
			v[i*dim+j] = c[ci*dim+j] + float32(sigma*rng.NormFloat64())
		}
	}
	normalize(v, dim)
	return v
}

func normalize(v []float32, dim int) {
	for i := 0; i < len(v); i += dim {
		var s float64
		for _, x := range v[i : i+dim] {
			s += float64(x) * float64(x)
		}
		if s == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(s))
		for j := i; j < i+dim; j++ {
			v[j] *= inv
		}
	}
}

// recallAt returns the mean fraction of the exact top k found.
func recallAt(got, want [][]rlsearch.Hit, k int) float64 {
	var sum float64
	for qi := range want {
		truth := map[int32]bool{}
		for _, h := range want[qi][:min(k, len(want[qi]))] {
			truth[h.Row] = true
		}
		found := 0
		for _, h := range got[qi][:min(k, len(got[qi]))] {
			if truth[h.Row] {
				found++
			}
		}
		sum += float64(found) / float64(len(truth))
	}
	return sum / float64(len(want))
}

func TestDotKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, d := range []int{1, 3, 15, 16, 17, 31, 32, 33, 384, 768} {
		a, b := randVecs(rng, 1, d), randVecs(rng, 1, d)
		codes := make([]int8, d)
		for i := range codes {
			codes[i] = int8(rng.Intn(256) - 128)
		}
		w := make([]int16, d)
		quantizeI8Query(a, w)
		var want float64
		var wantI8 int64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			wantI8 += int64(w[i]) * int64(codes[i])
		}
		if got := dotF32(a, b); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("dim %d: dotF32 %v, want %v", d, got, want)
		}
		if got := dotI8Q(w, codes); int64(got) != wantI8 {
			t.Errorf("dim %d: dotI8Q %v, want %v", d, got, wantI8)
		}
	}
}

func TestHNSWRecallClustered(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	const n, dim, nq = 5000, 32, 200
	vecs := clustered(rng, n+nq, dim, 300, 0.15)
	base, q := vecs[:n*dim], vecs[n*dim:]
	flat, _ := NewFlat(base, dim, FP32)
	want, _ := flat.Search(context.Background(), q, 10)
	for _, int8 := range []bool{false, true} {
		t.Run(fmt.Sprintf("int8=%v", int8), func(t *testing.T) {
			h, err := NewHNSW(context.Background(), base, dim, HNSWConfig{M: 16, EfConstruction: 100, EfSearch: 64, Seed: 1, Int8: int8})
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Search(context.Background(), q, 10)
			if err != nil {
				t.Fatal(err)
			}
			for qi := range got {
				if !slices.IsSortedFunc(got[qi], cmpHit) || len(got[qi]) != 10 {
					t.Fatalf("query %d: %d hits, sorted %v", qi, len(got[qi]), slices.IsSortedFunc(got[qi], cmpHit))
				}
			}
			if r := recallAt(got, want, 10); r < 0.95 {
				t.Fatalf("recall@10 = %.3f at efSearch 64, want ≥ 0.95", r)
			} else {
				t.Logf("recall@10 = %.3f at efSearch 64", r)
			}
		})
	}
}

func TestHNSWDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	vecs := clustered(rng, 2000, 16, 50, 0.2)
	var first *HNSW
	for _, workers := range []int{1, 2, 5} {
		h, err := NewHNSW(context.Background(), vecs, 16, HNSWConfig{M: 8, EfConstruction: 40, Seed: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = h
			continue
		}
		if !slices.Equal(h.links0, first.links0) || !slices.Equal(h.level, first.level) || h.entry != first.entry {
			t.Fatalf("workers=%d: graph differs from workers=1", workers)
		}
		for v := range h.upper {
			if !slices.Equal(h.upper[v], first.upper[v]) {
				t.Fatalf("workers=%d: node %d upper levels differ", workers, v)
			}
		}
	}
	var calls, last int
	other, _ := NewHNSW(context.Background(), vecs, 16, HNSWConfig{M: 8, EfConstruction: 40, Seed: 4,
		Progress: func(done, total int) {
			if done <= last || total != 2000 {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			calls, last = calls+1, done
		}})
	if calls < 2 || last != 2000 {
		t.Errorf("progress called %d times, last %d, want several ending at 2000", calls, last)
	}
	if slices.Equal(other.level, first.level) {
		t.Fatal("seed 4 drew the same levels as seed 3")
	}
}

func TestHNSWSaveLoadAdd(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	const dim = 24
	vecs := clustered(rng, 3000+100, dim, 100, 0.2)
	a, b, q := vecs[:2000*dim], vecs[2000*dim:3000*dim], vecs[3000*dim:]
	for _, tc := range []struct{ int8, zstd bool }{{false, false}, {true, true}} {
		t.Run(fmt.Sprintf("int8=%v/zstd=%v", tc.int8, tc.zstd), func(t *testing.T) {
			ctx := context.Background()
			h, err := NewHNSW(ctx, a, dim, HNSWConfig{M: 12, EfConstruction: 80, EfSearch: 48, Seed: 5, Int8: tc.int8})
			if err != nil {
				t.Fatal(err)
			}
			path := t.TempDir() + "/g.hnsw"
			if err := h.Save(path, tc.zstd); err != nil {
				t.Fatal(err)
			}
			l, err := LoadHNSW(path)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := h.Search(ctx, q, 10)
			got, err := l.Search(ctx, q, 10)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("query %d: loaded graph answers %v, saved one %v", i, got[i], want[i])
				}
			}
			// Add after load equals add before save.
			if err := h.Add(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := l.Add(ctx, b); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.links0, l.links0) {
				t.Fatal("adding to the loaded graph built different links than adding to the original")
			}
			got, _ = l.Search(ctx, q, 10)
			flat, _ := NewFlat(vecs[:3000*dim], dim, FP32)
			exact, _ := flat.Search(ctx, q, 10)
			if r := recallAt(got, exact, 10); r < 0.95 {
				t.Fatalf("recall@10 after add = %.3f, want ≥ 0.95", r)
			}
		})
	}
}

func TestHNSWEdgeCases(t *testing.T) {
	ctx := context.Background()
	h, err := NewHNSW(ctx, nil, 3, HNSWConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.Search(ctx, []float32{1, 2, 3}, 5); err != nil || len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("empty graph: %v %v", got, err)
	}
	path := t.TempDir() + "/empty"
	if err := h.Save(path, false); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadHNSW(path); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(13))
	for _, dim := range []int{1, 3, 33} {
		for _, n := range []int{1, 2, 50} {
			vecs := randVecs(rng, n, dim)
			h, err := NewHNSW(ctx, vecs, dim, HNSWConfig{M: 4, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			q := randVecs(rng, 3, dim)
			flat, _ := NewFlat(vecs, dim, FP32)
			for _, k := range []int{0, 1, n, n + 1} {
				got, err := h.Search(ctx, q, k)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := flat.Search(ctx, q, k)
				if dim == 1 {
					// Inner product on a line is no metric: the pruning heuristic can leave nodes
					// unreachable, so the graph may return fewer than k, never unsorted or wrong scores.
					for i := range got {
						if len(got[i]) > len(want[i]) || !slices.IsSortedFunc(got[i], cmpHit) {
							t.Fatalf("dim 1 n %d k %d: %v", n, k, got[i])
						}
					}
					continue
				}
				if k > 0 {
					// With ef ≥ n every node is reachable in a graph this small: exact.
					checkHits(t, got, want)
				}
			}
		}
	}
	if _, err := h.Search(ctx, []float32{1}, 1); err == nil {
		t.Error("query of wrong length accepted")
	}
	if _, err := h.Search(ctx, make([]float32, 33), -1); err == nil {
		t.Error("k = -1 accepted")
	}
	for _, c := range []HNSWConfig{{M: 1}, {EfSearch: -1}, {EfConstruction: -2}, {Workers: -1}} {
		if _, err := NewHNSW(ctx, nil, 3, c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestHNSWFileCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	h, _ := NewHNSW(context.Background(), randVecs(rng, 40, 4), 4, HNSWConfig{M: 2, Seed: 1, Int8: true})
	path := t.TempDir() + "/g"
	if err := h.Save(path, false); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	p := t.TempDir() + "/bad"
	// Every byte of the header and first sections, every 5th after (time under -race).
	for i := range good {
		if i > 400 && i%5 != 0 {
			continue
		}
		bad := slices.Clone(good)
		bad[i] ^= 0x04
		os.WriteFile(p, bad, 0o644)
		if _, err := LoadHNSW(p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(good); n += 1 + n/200 {
		os.WriteFile(p, good[:n], 0o644)
		if _, err := LoadHNSW(p); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v, want ErrCorrupt", n, err)
		}
	}
}

func FuzzLoadHNSW(f *testing.F) {
	rng := rand.New(rand.NewSource(15))
	for i, c := range []HNSWConfig{{M: 2, Seed: 1}, {M: 3, Int8: true}} {
		h, _ := NewHNSW(context.Background(), randVecs(rng, 20, 3), 3, c)
		p := f.TempDir() + fmt.Sprint("/g", i)
		h.Save(p, i == 1)
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := t.TempDir() + "/g"
		os.WriteFile(p, data, 0o644)
		if h, err := LoadHNSW(p); err == nil {
			h.Search(context.Background(), make([]float32, h.Dim()), 3)
			h.Add(context.Background(), make([]float32, h.Dim()))
		}
	})
}

// TestCandKeyOrdersAsBetter: the layer search's packed keys order as
// better does (apart from -0 below +0), unpack bit for bit, and insertKey
// keeps the ef best in order.
func TestCandKeyOrdersAsBetter(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	scores := []float32{0, 1, -1, 0.5, -0.5, math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32}
	var cs []cand
	for i := 0; i < 400; i++ {
		s := scores[rng.Intn(len(scores))]
		if rng.Intn(2) == 0 {
			s = float32(rng.NormFloat64())
		}
		cs = append(cs, cand{int32(rng.Intn(1 << 31)), s})
	}
	cs = append(cs, cand{0, 0}, cand{math.MaxInt32, 0}, cand{7, float32(math.Copysign(0, -1))})
	for _, a := range cs {
		if got := keyCand(candKey(a.id, a.s)); got.id != a.id || math.Float32bits(got.s) != math.Float32bits(a.s) {
			t.Fatalf("keyCand(candKey(%v)) = %v", a, got)
		}
		if keyCand(candKey(a.id, a.s)|keyExpanded) != keyCand(candKey(a.id, a.s)) {
			t.Fatalf("%v: the expanded flag changes the unpacked candidate", a)
		}
		for _, b := range cs {
			if a.id == b.id || a.s == 0 && b.s == 0 && math.Signbit(float64(a.s)) != math.Signbit(float64(b.s)) {
				continue
			}
			if ka, kb := candKey(a.id, a.s), candKey(b.id, b.s)|keyExpanded; (ka > kb) != better(a, b) {
				t.Fatalf("candKey order of %v and %v differs from better", a, b)
			}
		}
	}
	for _, ef := range []int{1, 2, 3, 7, 64} {
		var keys []uint64
		var all []cand
		for _, c := range cs {
			k := candKey(c.id, c.s)
			if len(keys) < ef || k > keys[len(keys)-1] {
				var at int
				keys, at = insertKey(keys, k, ef)
				if keys[at] != k {
					t.Fatalf("ef %d: insertKey returned position %d, which holds %x, not %x", ef, at, keys[at], k)
				}
			}
			all = append(all, c)
		}
		slices.SortFunc(all, func(a, b cand) int { return cmp.Compare(candKey(b.id, b.s), candKey(a.id, a.s)) })
		for i, k := range keys {
			if keyCand(k) != all[i] {
				t.Fatalf("ef %d: pool[%d] = %v, want %v", ef, i, keyCand(k), all[i])
			}
		}
	}
}

// TestBestHits: bestHits equals sorting and truncating, ties on score
// included, for every k.
func TestBestHits(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for _, n := range []int{0, 1, 5, 40, 257} {
		for _, k := range []int{0, 1, 2, 3, 10, 32, 33, 300} {
			hits := make([]rlsearch.Hit, n)
			for i := range hits {
				hits[i] = rlsearch.Hit{Row: int32(rng.Intn(1 << 20)), Score: float32(rng.Intn(20))}
			}
			want := slices.Clone(hits)
			slices.SortFunc(want, cmpHit)
			want = want[:min(k, n)]
			if got := bestHits(hits, k); !slices.Equal(got, want) {
				t.Fatalf("n %d k %d: bestHits %v, want %v", n, k, got, want)
			}
		}
	}
}

// reachable counts the nodes level 0 reaches from the entry point.
func reachable(h *HNSW) int {
	seen := make([]bool, h.n)
	h.markReachable(seen, h.entry, nil)
	n := 0
	for _, s := range seen {
		if s {
			n++
		}
	}
	return n
}

// TestHNSWConnectsEveryNode: exact duplicates make the pruning heuristic
// drop nodes' last in-links (a copy is "closer" to its twin than to the
// base); connect links them back, on NewHNSW and on Add.
func TestHNSWConnectsEveryNode(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(21))
	const dim, distinct, copies = 8, 400, 6
	one := clustered(rng, distinct, dim, 10, 0.3)
	var vecs []float32
	for c := 0; c < copies; c++ {
		vecs = append(vecs, one...)
	}
	n := distinct * copies
	h, err := NewHNSW(ctx, vecs[:n/2*dim], dim, HNSWConfig{M: 4, EfConstruction: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := reachable(h); got != n/2 {
		t.Fatalf("after NewHNSW: %d of %d nodes reachable", got, n/2)
	}
	if err := h.Add(ctx, vecs[n/2*dim:]); err != nil {
		t.Fatal(err)
	}
	if got := reachable(h); got != n {
		t.Fatalf("after Add: %d of %d nodes reachable", got, n)
	}
	// With ef ≥ n the search expands every reachable node, so it is exact.
	h.SetEfSearch(n)
	flat, _ := NewFlat(vecs, dim, FP32)
	q := randVecs(rng, 20, dim)
	got, _ := h.Search(ctx, q, 10)
	want, _ := flat.Search(ctx, q, 10)
	checkHits(t, got, want)
}
