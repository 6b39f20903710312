package ann

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
)

// f16table maps every binary16 bit pattern to its float32 value (256 KiB,
// built once; immutable).
var f16table = func() []float32 {
	t := make([]float32, 1<<16)
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return t
}()

// tileRows is the number of shard rows a worker scores at once: 256 rows of
// a 768-d shard widened to float32 are 768 KiB, about one L2 cache.
const tileRows = 256

// Flat is an exact inner-product index over a shard held in memory.
// It is immutable and safe for concurrent use.
type Flat struct {
	h   Header
	f32 []float32 // row-major [Count, Dim] when DType is FP32
	f16 []uint16  // row-major [Count, Dim] when DType is FP16
}

// NewFlat builds an in-memory index from row-major [n, dim] float32 vectors,
// stored as dt (values are rounded to binary16 for FP16). It copies vecs.
func NewFlat(vecs []float32, dim int, dt DType) (*Flat, error) {
	if dim <= 0 || len(vecs)%dim != 0 {
		return nil, fmt.Errorf("%w: %d values, dim %d", ErrDim, len(vecs), dim)
	}
	f := &Flat{h: Header{DType: dt, Count: len(vecs) / dim, Dim: dim}}
	switch dt {
	case FP32:
		f.f32 = slices.Clone(vecs)
	case FP16:
		f.f16 = make([]uint16, len(vecs))
		for i, v := range vecs {
			f.f16[i] = float16.Fromfloat32(v).Bits()
		}
	default:
		return nil, fmt.Errorf("ann: unsupported dtype %v", dt)
	}
	return f, nil
}

// Header returns the shard header (Count, Dim, DType, encoder id).
func (f *Flat) Header() Header { return f.h }

// Len is the number of vectors.
func (f *Flat) Len() int { return f.h.Count }

// Dim is the vector dimension.
func (f *Flat) Dim() int { return f.h.Dim }

// Vector returns row's vector widened to float32 (a new slice).
func (f *Flat) Vector(row int) []float32 {
	out := make([]float32, f.h.Dim)
	copy(out, f.widen(out, row, row+1))
	return out
}

// widen writes rows [lo, hi) as float32 into dst.
func (f *Flat) widen(dst []float32, lo, hi int) []float32 {
	d := f.h.Dim
	if f.f32 != nil {
		return f.f32[lo*d : hi*d]
	}
	src := f.f16[lo*d : hi*d]
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = f16table[b]
	}
	return dst
}

// Search returns, for each query, the k rows with the largest inner
// product, sorted by descending score, ties by ascending row.
//
// q is row-major [nq, Dim()] float32 (normalise it yourself if the shard is
// normalised and cosine is wanted). k is capped at Len(); k == 0 gives empty
// lists. The work is spread over GOMAXPROCS goroutines by row tiles; ctx is
// checked between tiles. Errors: ErrDim when len(q) is not a multiple of
// Dim(), an error wrapping rlsearch.ErrBadInput for k < 0, ctx.Err().
func (f *Flat) Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error) {
	d := f.h.Dim
	if len(q)%d != 0 {
		return nil, fmt.Errorf("%w: query length %d is not a multiple of dim %d", ErrDim, len(q), d)
	}
	if k < 0 {
		return nil, fmt.Errorf("%w: ann: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
	}
	nq := len(q) / d
	k = min(k, f.h.Count)
	out := make([][]rlsearch.Hit, nq)
	if nq == 0 || k == 0 {
		for i := range out {
			out[i] = []rlsearch.Hit{}
		}
		return out, nil
	}
	tiles := (f.h.Count + tileRows - 1) / tileRows
	workers := min(runtime.GOMAXPROCS(0), tiles)
	var next atomic.Int64
	results := make([][]topK, workers)
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			heaps := make([]topK, nq)
			for i := range heaps {
				heaps[i] = newTopK(k)
			}
			scratch := make([]float32, tileRows*d)
			scores := make([]float32, 4*tileRows)
			for !stop.Load() {
				t := int(next.Add(1) - 1)
				if t >= tiles {
					break
				}
				if ctx.Err() != nil {
					stop.Store(true)
					break
				}
				lo := t * tileRows
				hi := min(lo+tileRows, f.h.Count)
				tile := f.widen(scratch, lo, hi)
				scoreTile(q, nq, tile, hi-lo, d, lo, heaps, scores)
			}
			results[w] = heaps
		}(w)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for qi := range out {
		var all []rlsearch.Hit
		for w := range results {
			all = append(all, results[w][qi].h...)
		}
		slices.SortFunc(all, cmpHit)
		out[qi] = all[:min(k, len(all))]
	}
	return out, nil
}

func cmpHit(a, b rlsearch.Hit) int {
	if rlsearch.Less(a, b) {
		return -1
	}
	if rlsearch.Less(b, a) {
		return 1
	}
	return 0
}

// scoreTile scores nq queries against n tile rows starting at row base,
// four queries at a time so that each row value loaded feeds four products.
func scoreTile(q []float32, nq int, tile []float32, n, d, base int, heaps []topK, scores []float32) {
	qi := 0
	for ; qi+4 <= nq; qi += 4 {
		q0, q1, q2, q3 := q[qi*d:(qi+1)*d], q[(qi+1)*d:(qi+2)*d], q[(qi+2)*d:(qi+3)*d], q[(qi+3)*d:(qi+4)*d]
		for r := 0; r < n; r++ {
			s0, s1, s2, s3 := dot4(q0, q1, q2, q3, tile[r*d:(r+1)*d])
			scores[r], scores[tileRows+r], scores[2*tileRows+r], scores[3*tileRows+r] = s0, s1, s2, s3
		}
		for j := 0; j < 4; j++ {
			h := &heaps[qi+j]
			for r, s := range scores[j*tileRows : j*tileRows+n] {
				h.push(int32(base+r), s)
			}
		}
	}
	for ; qi < nq; qi++ {
		qv := q[qi*d : (qi+1)*d]
		h := &heaps[qi]
		for r := 0; r < n; r++ {
			h.push(int32(base+r), dot(qv, tile[r*d:(r+1)*d]))
		}
	}
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dot4(a, b, c, e, x []float32) (float32, float32, float32, float32) {
	n := len(x)
	a, b, c, e = a[:n], b[:n], c[:n], e[:n]
	var sa0, sa1, sb0, sb1, sc0, sc1, se0, se1 float32
	i := 0
	for ; i+2 <= n; i += 2 {
		x0, x1 := x[i], x[i+1]
		sa0 += a[i] * x0
		sa1 += a[i+1] * x1
		sb0 += b[i] * x0
		sb1 += b[i+1] * x1
		sc0 += c[i] * x0
		sc1 += c[i+1] * x1
		se0 += e[i] * x0
		se1 += e[i+1] * x1
	}
	if i < n {
		x0 := x[i]
		sa0 += a[i] * x0
		sb0 += b[i] * x0
		sc0 += c[i] * x0
		se0 += e[i] * x0
	}
	return sa0 + sa1, sb0 + sb1, sc0 + sc1, se0 + se1
}

// topK keeps the k best hits seen so far in a min-heap whose root is the
// worst kept hit (lowest score, then highest row).
type topK struct {
	k int
	h []rlsearch.Hit
}

func newTopK(k int) topK { return topK{k: k, h: make([]rlsearch.Hit, 0, k)} }

func (t *topK) push(row int32, s float32) {
	if s != s { // NaN never ranks
		return
	}
	if len(t.h) < t.k {
		t.h = append(t.h, rlsearch.Hit{Row: row, Score: s})
		t.up(len(t.h) - 1)
		return
	}
	root := t.h[0]
	if s < root.Score || (s == root.Score && row > root.Row) {
		return
	}
	t.h[0] = rlsearch.Hit{Row: row, Score: s}
	t.down(0)
}

// worse reports whether a ranks below b.
func worse(a, b rlsearch.Hit) bool { return rlsearch.Less(b, a) }

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(t.h[i], t.h[p]) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(t.h[r], t.h[l]) {
			m = r
		}
		if !worse(t.h[m], t.h[i]) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}
