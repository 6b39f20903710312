package ann

import (
	"context"
	"fmt"
	"math"
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

// tileBytes is the size of one widened float32 tile of shard rows that a
// worker scores against every query block: 192 KiB stays in a 512 KiB L2
// cache (AMD EPYC, Intel Xeon since Skylake-SP have ≥ 512 KiB per core)
// next to the queries and scores.
const tileBytes = 192 << 10

// Flat is an exact inner-product index over vectors held in memory
// (fp32, fp16 or int8 with per-dimension scale/offset). It is immutable
// and safe for concurrent use.
type Flat struct {
	h      Header
	f32    []float32 // row-major [Count, Dim] when DType is FP32
	f16    []uint16  // row-major [Count, Dim] when DType is FP16
	i8     []int8    // row-major [Count, Dim] when DType is INT8
	ids    []int64   // optional external ids, [Count]; nil when absent
	kernel *tileKernel
	// Int8Scan: scan holds int8 codes of the rows ([Count, Dim], scale and
	// offset per dimension) that Search scans for k+extra candidates, then
	// re-ranks on the storage above; nil scan means Search scores the
	// storage itself.
	scan  *int8Codes
	extra int
}

// int8Codes are per-dimension int8 codes of a Flat's rows (FitInt8), each
// row zero-padded to stride values (Dim rounded up to 32, the width of the
// four-row kernel, so that no row ends in a scalar tail; the query's
// padding is zero too).
type int8Codes struct {
	c             []int8 // [Count, stride]
	stride        int
	scale, offset []float32 // [Dim]
}

// NewFlat builds an in-memory index from row-major [n, dim] float32 vectors,
// stored as dt: FP32 copies, FP16 rounds to binary16, INT8 quantises per
// dimension with FitInt8 over all of vecs. It does not keep vecs.
func NewFlat(vecs []float32, dim int, dt DType) (*Flat, error) {
	if dim <= 0 || len(vecs)%dim != 0 {
		return nil, fmt.Errorf("%w: %d values, dim %d", ErrDim, len(vecs), dim)
	}
	h := Header{DType: dt, Count: len(vecs) / dim, Dim: dim}
	if dt == INT8 {
		h.Scale, h.Offset = FitInt8(vecs, dim)
	}
	f := &Flat{h: h, kernel: defaultKernel}
	switch dt {
	case FP32:
		f.f32 = slices.Clone(vecs)
	case FP16:
		f.f16 = make([]uint16, len(vecs))
		encodeF16(f.f16, vecs)
	case INT8:
		f.i8 = make([]int8, len(vecs))
		encodeI8(f.i8, vecs, h.Scale, h.Offset)
	default:
		return nil, fmt.Errorf("ann: unsupported dtype %v", dt)
	}
	return f, nil
}

// DefaultRerankExtra is the number of candidates Int8Scan keeps per query
// beyond k when extra is 0: 16. Measured with k = 10 on bge-base
// (5,544 × 768), SIFT 10k and Fashion-MNIST 10k (TestFlatInt8ScanRecall in
// bench/suites): recall@10 against fp32 exact is 1.0 from 4 extra
// candidates on (0.9857–0.9970 for the int8 codes alone).
const DefaultRerankExtra = 16

// Int8Scan returns exact search over f's rows that scans int8 codes of
// them instead: Search finds each query's k + extra best rows by the codes
// (extra 0: DefaultRerankExtra), scores those rows on f's own storage
// (fp32 or fp16) and returns the k best with those scores. Answers equal
// f.Search's whenever f's true top k are among the candidates (recall@10
// 1.0 on the real sets, see DefaultRerankExtra); a query streams 1 byte
// per value instead of 2 or 4, plus k + extra rows of f. Memory: f's
// storage, which the result shares, plus Dim bytes per vector of codes.
//
// The codes are fitted per dimension over f's rows (FitInt8) and scored
// with the integer kernels (dotq.go: the query side quantised to int16
// once per query, exact integer sums), every query on its own, so an
// answer is the same bits on every CPU and at every batch size. Errors:
// rlsearch.ErrBadInput for an int8 f (it is its own codes) or extra < 0.
func (f *Flat) Int8Scan(extra int) (*Flat, error) {
	switch {
	case f.h.DType == INT8:
		return nil, fmt.Errorf("%w: ann: Int8Scan: the vector file is int8 already (exact search over it is its own int8 scan)", rlsearch.ErrBadInput)
	case extra < 0:
		return nil, fmt.Errorf("%w: ann: Int8Scan: extra = %d must be ≥ 0", rlsearch.ErrBadInput, extra)
	case extra == 0:
		extra = DefaultRerankExtra
	}
	d := f.h.Dim
	r := NewInt8Range(d)
	buf := make([]float32, 0, 4096*d)
	for lo := 0; lo < f.h.Count; lo += 4096 {
		r.Add(f.widen(buf[:cap(buf)], lo, min(lo+4096, f.h.Count)))
	}
	stride := int8ScanStride(d)
	sc := &int8Codes{c: make([]int8, f.h.Count*stride), stride: stride}
	sc.scale, sc.offset = r.Fit()
	for lo := 0; lo < f.h.Count; lo += 4096 {
		hi := min(lo+4096, f.h.Count)
		rows := f.widen(buf[:cap(buf)], lo, hi)
		for i := lo; i < hi; i++ {
			encodeI8(sc.c[i*stride:i*stride+d], rows[(i-lo)*d:(i-lo+1)*d], sc.scale, sc.offset)
		}
	}
	g := *f
	g.scan, g.extra = sc, extra
	return &g, nil
}

// Int8Scanned reports whether Search scans int8 codes and re-ranks
// (Int8Scan), and how many candidates beyond k it keeps.
func (f *Flat) Int8Scanned() (bool, int) { return f.scan != nil, f.extra }

func encodeF16(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = float16.Fromfloat32(v).Bits()
	}
}

// FitInt8 returns per-dimension scale and offset for int8 scalar
// quantisation of row-major [n, dim] vecs: dimension j spans [min_j, max_j]
// over the rows, scale_j = (max_j-min_j)/255 and offset_j = min_j +
// 128·scale_j, so that code c ∈ [-128, 127] decodes to offset_j + scale_j·c
// and the rounding error is at most scale_j/2.
func FitInt8(vecs []float32, dim int) (scale, offset []float32) {
	r := NewInt8Range(dim)
	r.Add(vecs)
	return r.Fit()
}

func encodeI8(dst []int8, src []float32, scale, offset []float32) {
	d := len(scale)
	for i, v := range src {
		j := i % d
		var c float64
		if scale[j] > 0 {
			c = math.Round(float64((v - offset[j]) / scale[j]))
		}
		dst[i] = int8(max(-128, min(127, c)))
	}
}

// Header returns the shard header (Count, Dim, DType, encoder id, int8
// scale/offset). The slices in it are shared: do not modify them.
func (f *Flat) Header() Header { return f.h }

// Len is the number of vectors.
func (f *Flat) Len() int { return f.h.Count }

// Dim is the vector dimension.
func (f *Flat) Dim() int { return f.h.Dim }

// IDs returns the shard's id table ([Len()], row i has external id IDs()[i])
// or nil when the shard has none. Shared: do not modify.
func (f *Flat) IDs() []int64 { return f.ids }

// Vector returns row's vector widened to float32 (a new slice).
func (f *Flat) Vector(row int) []float32 {
	out := make([]float32, f.h.Dim)
	copy(out, f.widen(out, row, row+1))
	return out
}

// Vectors returns rows [lo, hi) widened to float32 as a new row-major slice.
func (f *Flat) Vectors(lo, hi int) []float32 {
	out := make([]float32, (hi-lo)*f.h.Dim)
	copy(out, f.widen(out, lo, hi))
	return out
}

// widen returns rows [lo, hi) as float32: a view of the fp32 storage, or
// dst filled with the widened fp16/int8 values.
func (f *Flat) widen(dst []float32, lo, hi int) []float32 {
	d := f.h.Dim
	switch {
	case f.f32 != nil:
		return f.f32[lo*d : hi*d]
	case f.f16 != nil:
		src := f.f16[lo*d : hi*d]
		dst = dst[:len(src)]
		for i, b := range src {
			dst[i] = f16table[b]
		}
		return dst
	}
	src := f.i8[lo*d : hi*d]
	dst = dst[:len(src)]
	sc, off := f.h.Scale, f.h.Offset
	for r := 0; r < hi-lo; r++ {
		row, out := src[r*d:(r+1)*d], dst[r*d:(r+1)*d]
		for j, c := range row {
			out[j] = off[j] + sc[j]*float32(c)
		}
	}
	return dst
}

// Search returns, for each query, the k rows with the largest inner
// product, sorted by descending score, ties by ascending row.
//
// q is row-major [nq, Dim()] float32 (normalise it yourself if the shard is
// normalised and cosine is wanted). k is capped at Len(); k == 0 gives empty
// lists. Shard rows are scored in tiles (tileBytes of widened float32)
// against blocks of 4 queries by the fastest tile kernel for this CPU
// (KernelName); tiles are spread over GOMAXPROCS goroutines, each keeping a
// bounded top-k heap per query, merged at the end. ctx is checked between
// tiles. The returned slices are new and owned by the caller. Errors:
// ErrDim when len(q) is not a multiple of Dim(), an error wrapping
// rlsearch.ErrBadInput for k < 0, ctx.Err().
func (f *Flat) Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error) {
	d := f.h.Dim
	if len(q)%d != 0 {
		return nil, fmt.Errorf("%w: query length %d is not a multiple of dim %d", ErrDim, len(q), d)
	}
	if k < 0 {
		return nil, fmt.Errorf("%w: ann: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nq := len(q) / d
	k = min(k, f.h.Count)
	if nq == 0 || k == 0 {
		out := make([][]rlsearch.Hit, nq)
		for i := range out {
			out[i] = []rlsearch.Hit{}
		}
		return out, nil
	}
	if f.scan == nil {
		return f.scanRows(ctx, q, nq, k)
	}
	ks := make([]int, nq)
	for i := range ks {
		ks[i] = k
	}
	return f.searchInt8Widths(ctx, q, ks)
}

// searchInt8Widths answers row i of q at width ks[i] (each 0 ≤ ks[i]) from
// one int8 scan at the widest: a query's candidates at width k are the
// first k+extra of its list by code score (descending, ties by row, a
// total order), so that prefix of the widest list is what a scan at width k
// keeps, and each answer equals Search of that row alone at that width.
func (f *Flat) searchInt8Widths(ctx context.Context, q []float32, ks []int) ([][]rlsearch.Hit, error) {
	d, n := f.h.Dim, f.h.Count
	cand := func(k int) int { return min(min(k, n)+f.extra, n) }
	widest := 0
	for _, k := range ks {
		widest = max(widest, cand(k))
	}
	out := make([][]rlsearch.Hit, len(ks))
	if widest == 0 || len(ks) == 0 {
		for i := range out {
			out[i] = []rlsearch.Hit{}
		}
		return out, nil
	}
	all, err := f.scanRows(ctx, q, len(ks), widest)
	if err != nil {
		return nil, err
	}
	var ids []int32
	var scores []float32
	for i, k := range ks {
		if k == 0 {
			out[i] = []rlsearch.Hit{}
			continue
		}
		hs := all[i][:min(cand(k), len(all[i]))]
		ids, scores = ids[:0], slices.Grow(scores[:0], len(hs))[:len(hs)]
		for _, h := range hs {
			ids = append(ids, h.Row)
		}
		// Re-score on the storage (fp32 or fp16) and keep the k best.
		if qv := q[i*d : (i+1)*d]; f.f32 != nil {
			dotRowsF32(qv, f.f32, ids, scores)
		} else {
			dotRowsF16(qv, f.f16, ids, scores)
		}
		for j := range hs {
			hs[j].Score = scores[j]
		}
		slices.SortFunc(hs, cmpHit)
		out[i] = hs[:min(k, len(hs)):min(k, len(hs))]
	}
	return out, nil
}

// scanRows is Search's exhaustive pass over the storage (or the int8 scan
// codes) for nq ≥ 1 queries and 1 ≤ k ≤ Count.
func (f *Flat) scanRows(ctx context.Context, q []float32, nq, k int) ([][]rlsearch.Hit, error) {
	d := f.h.Dim
	out := make([][]rlsearch.Hit, nq)
	// The int8 scan codes are scored with the integer kernel, every query
	// on its own (the same sums at every batch size).
	var iq []i8Query
	var qoff []float32
	if f.scan != nil {
		iq, qoff = f.scan.quantizeQueries(q, nq)
	}
	kern := f.kernel
	if kern == nil {
		kern = defaultKernel
	}
	// Queries padded with zero rows to a multiple of 4.
	nq4 := (nq + 3) / 4 * 4
	qp := q
	if nq4 != nq {
		qp = make([]float32, nq4*d)
		copy(qp, q)
	}
	tileRows := max(kern.rows, tileBytes/(4*d)/kern.rows*kern.rows)
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
			var scratch []float32
			var iota, isum []int32
			if iq != nil {
				iota, isum = make([]int32, tileRows), make([]int32, 2*tileRows)
				for r := range iota {
					iota[r] = int32(r)
				}
			} else {
				scratch = make([]float32, tileRows*d)
			}
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
				n := hi - lo
				if iq != nil {
					codes := f.scan.c[lo*f.scan.stride : hi*f.scan.stride]
					for qi := 0; qi < len(iq); qi += 2 {
						// Two queries per pass over the tile where there are
						// two (the same sums as one at a time).
						m := min(2, len(iq)-qi)
						if m == 2 {
							dotSeqI8Q2(iq[qi].w, iq[qi+1].w, codes, iota, isum[:n], isum[tileRows:tileRows+n])
						} else {
							dotSeqI8Q(iq[qi].w, codes, iota, isum[:n])
						}
						for j := 0; j < m; j++ {
							h := &heaps[qi+j]
							off, alpha := qoff[qi+j], iq[qi+j].alpha
							thr := h.floor()
							for r, v := range isum[j*tileRows : j*tileRows+n] {
								if s := scoreI8(off, alpha, v); s >= thr {
									h.push(int32(lo+r), s)
									thr = h.floor()
								}
							}
						}
					}
					continue
				}
				// One query: score the whole rows in place (no padding of
				// the query block, no widening); the last tile's rows past a
				// multiple of kern.rows go through the padded path below.
				if full := n / kern.rows * kern.rows; nq == 1 && kern.scoreQ1(q, f, lo, full, scores) {
					h := &heaps[0]
					for r := 0; r < full; r++ {
						s := scores[r]
						if len(h.h) == h.k && s < h.h[0].Score {
							continue
						}
						h.push(int32(lo+r), s)
					}
					if full == n {
						continue
					}
					lo += full
					n -= full
				}
				padded := (n + kern.rows - 1) / kern.rows * kern.rows
				tile := f.widen(scratch, lo, hi)
				if padded != n {
					copy(scratch, tile)
					clear(scratch[n*d : padded*d])
					tile = scratch[:padded*d]
				}
				for qb := 0; qb < nq4; qb += 4 {
					kern.score(qp[qb*d:(qb+4)*d], tile, padded, d, scores)
					for j := 0; j < 4 && qb+j < nq; j++ {
						h := &heaps[qb+j]
						for r := 0; r < n; r++ {
							s := scores[4*r+j]
							if len(h.h) == h.k && s < h.h[0].Score {
								continue
							}
							h.push(int32(lo+r), s)
						}
					}
				}
			}
			results[w] = heaps
		}(w)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for qi := range out {
		all := make([]rlsearch.Hit, 0, workers*k)
		for w := range results {
			all = append(all, results[w][qi].h...)
		}
		slices.SortFunc(all, cmpHit)
		out[qi] = all[:min(k, len(all))]
	}
	return out, nil
}

// quantizeQueries prepares nq queries for integer scoring of the codes:
// q·x ≈ qoff + alpha·Σ w_j·c_j (dotq.go).
func (c *int8Codes) quantizeQueries(q []float32, nq int) ([]i8Query, []float32) {
	d := len(c.scale)
	iq, qoff := make([]i8Query, nq), make([]float32, nq)
	qs := make([]float32, d)
	for i := range iq {
		qi := q[i*d : (i+1)*d]
		for j, v := range qi {
			qs[j] = v * c.scale[j]
			qoff[i] += v * c.offset[j]
		}
		iq[i].w = make([]int16, c.stride) // zero past d, like the codes
		iq[i].alpha = quantizeI8Query(qs, iq[i].w[:d])
	}
	return iq, qoff
}

// cmpHit is rlsearch.CompareHits (higher score first, ties by lower row).
func cmpHit(a, b rlsearch.Hit) int { return rlsearch.CompareHits(a, b) }

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

// floor is the score a hit must reach to enter a full heap (the root's;
// -Inf while it is not full).
func (t *topK) floor() float32 {
	if len(t.h) == t.k {
		return t.h[0].Score
	}
	return float32(math.Inf(-1))
}

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
