package ann

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/kernels"
)

// This file is the GPU search canary (issue 32): before Open serves dense
// search from a GPUFlat, a fixed sample runs on it and on the CPU exact
// path, and the two must agree.

// ErrGPUCanary is wrapped by a failed search canary: the GPU index's hits
// for some query of the fixed sample differ from the CPU exact search's.
var ErrGPUCanary = errors.New("ann: GPU search canary: the GPU's hits differ from the CPU exact search")

// Search canary sample.
const (
	// CanaryRowQueries queries are shard rows, spread evenly over the
	// reference rows (each must find itself); CanaryRandomQueries are unit
	// vectors from a PCG seeded with canarySeed. Their negations make the
	// 128-query batch.
	CanaryRowQueries    = 32
	CanaryRandomQueries = 32
	// CanaryRefRows bounds the rows the CPU exact reference scans: a shard
	// of up to 65,536 rows is compared whole; a larger one over
	// canaryBlocks blocks of CanaryRefRows/canaryBlocks rows spread evenly
	// from its first row to its last (plus every row the GPU returned,
	// rescored). At 768-d this is 128 × 65,536 × 768 ≈ 6.4 G
	// multiply-adds, whatever the shard size.
	CanaryRefRows = 1 << 16
	canaryBlocks  = 16
	canarySeed    = 0x5ea2c4
	// canaryFloor is an absolute slack added to every per-row bound
	// (2^-20 ≈ 9.5e-7): the float32 rounding of the reported score itself.
	canaryFloor = 1.0 / (1 << 20)
)

// canaryCase is one Search call of the sample: queries [lo, hi) at k.
type canaryCase struct{ lo, hi, k int }

// canaryCases cover every pipeline choosePath picks for a configuration:
// 128 queries (rls_scan128), 64 (rls_scan64), 16 and 1 (rls_scan16), and
// k > kernels.KMax (host selection), at k 10 and 100.
func canaryCases() []canaryCase {
	nq := CanaryRowQueries + CanaryRandomQueries
	return []canaryCase{
		{0, 2 * nq, 10},
		{0, nq, 10}, {0, nq, 100},
		{CanaryRowQueries - 8, CanaryRowQueries + 8, 10}, {CanaryRowQueries - 8, CanaryRowQueries + 8, 100},
		{0, 1, 10},
		{CanaryRowQueries - 1, CanaryRowQueries + 1, kernels.KMax + 1},
	}
}

// canaryIntervals are the reference rows: the whole shard up to refRows,
// else canaryBlocks blocks spread from row 0 to row n-1.
func canaryIntervals(n, refRows int) []scanSpan {
	if n <= refRows {
		return []scanSpan{{0, n}}
	}
	blk := max(1, refRows/canaryBlocks)
	var out []scanSpan
	for b := 0; b < canaryBlocks; b++ {
		lo := b * (n - blk) / (canaryBlocks - 1)
		if len(out) > 0 && lo < out[len(out)-1].hi {
			out[len(out)-1].hi = lo + blk
			continue
		}
		out = append(out, scanSpan{lo, lo + blk})
	}
	return out
}

// CanaryRows returns the shard rows the canary uses as queries for a
// shard of n rows (with the default reference of CanaryRefRows rows).
func CanaryRows(n int) []int { return canaryQueryRows(canaryIntervals(n, CanaryRefRows)) }

func canaryQueryRows(iv []scanSpan) []int {
	m := 0
	for _, s := range iv {
		m += s.hi - s.lo
	}
	rows := make([]int, CanaryRowQueries)
	for j := range rows {
		p := (2*j + 1) * m / (2 * CanaryRowQueries)
		for _, s := range iv {
			if p < s.hi-s.lo {
				rows[j] = s.lo + p
				break
			}
			p -= s.hi - s.lo
		}
	}
	return rows
}

// Canary runs the search canary on g: the fixed sample (CanaryRowQueries
// rows of the shard, CanaryRandomQueries seeded unit vectors, and the
// negations of both: 128 queries) through g.Search in the batches of
// canaryCases (every pipeline choosePath picks: 128, 64, 16 and 1
// queries at k 10 and 100, and 2 queries at k 2,049 > kernels.KMax), and
// through the CPU exact path (Flat.Search) over the reference rows
// (CanaryRefRows), compared hit by hit:
//
//   - count: min(k, Len()) hits; rows in range, none twice; the GPU's own
//     order strict: descending score, equal scores by ascending row.
//   - score: each hit's score within its row's bound e(r) + 2^-20 of the
//     exact score ⟨q, x_r⟩ (float64 over the values rows returns).
//   - ids: rank i holds the row of rank i of the exact top-k over the
//     reference rows plus the rows the GPU returned (E), or a row whose
//     exact score is within 2·T of E[i]'s (T the largest bound of the
//     list): rows swap only where their scores tie within the error.
//
// e(r) is the error the GPU's arithmetic can make on row r, computed from
// the values: Σ_j |fp16(q_j) − q_j|·|x̂_j| + |q_j|·|x̂_j − x_j| for an fp16
// corpus (x̂ = fp16(x), which is x for an fp16 shard), or Σ_j |fp16(q_j·s_j)
// − q_j·s_j|·|c_j| + 2^-24·|Σ q·offset| over int8 codes c (GPUConfig.Int8),
// plus 2·d·2^-24·Σ_j|q̂_j x̂_j| for the fp32 accumulation (Higham's γ_d,
// doubled because tensor cores add with truncation, not rounding: Fasi, Higham, Mikaitis and Pranesh 2021). For unit vectors at d 768 it is
// at most ≈ 1.1e-3 and typically ≈ 1e-4; a wrong kernel moves a score by
// far more.
//
// rows(lo, hi) returns rows [lo, hi) as the CPU holds them, widened to
// float32, row-major (Flat.Vectors). A row outside the reference rows
// that the GPU drops is not seen: the reference is bounded so the canary
// costs the same at every shard size.
//
// The report's Value is the largest |Δ score|, Bar the largest bound.
// Errors: one wrapping ErrGPUCanary naming the first differing query
// (index, what it is, k, rank, expected row/score and got); the GPU's own
// errors; ctx.Err().
func (g *GPUFlat) Canary(ctx context.Context, rows func(lo, hi int) []float32) (canary.Report, error) {
	return SearchCanary(ctx, g, rows)
}

// SearchCanary is GPUFlat.Canary for any exact Index: a GPUFlat (whose
// error bounds follow its storage, fp16 or int8 codes) or a Flat (the
// bounds of an fp16 copy; bench/gpu's dry run measures the canary's CPU
// side this way). An approximate index (HNSW) fails it by design.
func SearchCanary(ctx context.Context, idx Index, rows func(lo, hi int) []float32) (canary.Report, error) {
	t0 := time.Now()
	n, d := idx.Len(), idx.Dim()
	refRows := CanaryRefRows
	path := fmt.Sprintf("%T", idx)
	if _, ok := idx.(*Flat); ok {
		path = "cpu flat"
	}
	paths := ""
	var int8 bool
	var scale, offset []float32
	if g, ok := idx.(*GPUFlat); ok {
		if g.cfg.canaryRows > 0 {
			refRows = g.cfg.canaryRows
		}
		path, paths = strings.Join(g.Devices(), ", "), "; GPU path "+g.Paths()
		int8, scale, offset = g.cfg.Int8, g.h.Scale, g.h.Offset
	}
	if n == 0 {
		return canary.Report{What: "search canary", Skipped: "empty vector file: nothing to compare"}, nil
	}
	iv := canaryIntervals(n, refRows)
	qrows := canaryQueryRows(iv)
	nq := CanaryRowQueries + CanaryRandomQueries
	q := make([]float32, 0, 2*nq*d)
	for _, r := range qrows {
		q = append(q, rows(r, r+1)...)
	}
	rng := rand.New(rand.NewPCG(canarySeed, uint64(d)))
	for range CanaryRandomQueries {
		v := make([]float32, d)
		var ss float64
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(ss))
		}
		q = append(q, v...)
	}
	for _, v := range q[:nq*d] {
		q = append(q, -v)
	}
	what := func(qi int) string {
		switch {
		case qi < CanaryRowQueries:
			return fmt.Sprintf("vector file row %d", qrows[qi])
		case qi < nq:
			return fmt.Sprintf("random unit vector %d", qi-CanaryRowQueries)
		case qi < nq+CanaryRowQueries:
			return fmt.Sprintf("−(vector file row %d)", qrows[qi-nq])
		}
		return fmt.Sprintf("−(random unit vector %d)", qi-nq-CanaryRowQueries)
	}
	rep := canary.Report{What: "search canary", Ran: true, Path: path, Inputs: 2 * nq, Measure: "max |Δ score|"}
	if len(iv) == 1 {
		rep.Reference = fmt.Sprintf("cpu exact flat over all %d rows", n)
	} else {
		rep.Reference = fmt.Sprintf("cpu exact flat over %d of %d rows (%d blocks) plus the rows returned", refRows, n, len(iv))
	}

	// The index first, then the reference: the CPU's cost is separate.
	cases := canaryCases()
	got := make([][][]rlsearch.Hit, len(cases))
	for ci, c := range cases {
		hits, err := idx.Search(ctx, q[c.lo*d:c.hi*d], c.k)
		if err != nil {
			return rep, fmt.Errorf("ann: search canary: %d queries at k %d: %w", c.hi-c.lo, c.k, err)
		}
		got[ci] = hits
	}
	tGPU := time.Since(t0)

	// CPU exact over the reference rows, in blocks of at most 4,096 rows
	// (one float32 copy at a time): the top 100 of all 128 queries, and the
	// top KMax+1 of the queries of the large-k case.
	smallK, bigLo, bigHi := 100, cases[len(cases)-1].lo, cases[len(cases)-1].hi
	ref := make([][]rlsearch.Hit, 2*nq)
	big := make([][]rlsearch.Hit, bigHi-bigLo)
	for _, s := range iv {
		for lo := s.lo; lo < s.hi; lo += 4096 {
			hi := min(s.hi, lo+4096)
			f, err := NewFlat(rows(lo, hi), d, FP32)
			if err != nil {
				return rep, err
			}
			for _, part := range []struct {
				dst    [][]rlsearch.Hit
				q0, q1 int
				k      int
			}{{ref, 0, 2 * nq, smallK}, {big, bigLo, bigHi, kernels.KMax + 1}} {
				hits, err := f.Search(ctx, q[part.q0*d:part.q1*d], part.k)
				if err != nil {
					return rep, err
				}
				for i, hs := range hits {
					for _, h := range hs {
						part.dst[i] = append(part.dst[i], rlsearch.Hit{Row: h.Row + int32(lo), Score: h.Score})
					}
				}
			}
		}
	}

	for _, part := range []struct {
		lists [][]rlsearch.Hit
		k     int
	}{{ref, smallK}, {big, kernels.KMax + 1}} {
		for i, l := range part.lists {
			slices.SortFunc(l, rlsearch.CompareHits)
			part.lists[i] = l[:min(part.k, len(l))]
		}
	}
	sc := &canaryScorer{rows: rows, dim: d, int8: int8, scale: scale, offset: offset, memo: map[[2]int]canaryScore{}}
	for ci, c := range cases {
		for i, hits := range got[ci] {
			qi := c.lo + i
			cands := ref[qi]
			if c.k > kernels.KMax {
				cands = big[qi-bigLo]
			}
			sc.setQuery(qi, q[qi*d:(qi+1)*d])
			v, bar, err := sc.compare(hits, cands[:min(c.k, len(cands))], min(c.k, n), n)
			rep.Value, rep.Bar = max(rep.Value, v), max(rep.Bar, bar)
			if err != nil {
				rep.Seconds = time.Since(t0).Seconds()
				rep.Failure = fmt.Sprintf("query %d (%s), batch of %d, k %d: %v", qi, what(qi), c.hi-c.lo, c.k, err)
				return rep, fmt.Errorf("%w: %s%s", ErrGPUCanary, rep.Failure, paths)
			}
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
	}
	rep.Passed = true
	rep.Seconds = time.Since(t0).Seconds()
	rep.Reference += fmt.Sprintf("; index %.3f s, CPU reference %.3f s", tGPU.Seconds(), rep.Seconds-tGPU.Seconds())
	return rep, nil
}

// canaryScorer computes exact scores and error bounds of single rows for
// one query at a time (setQuery), memoised by (query, row).
type canaryScorer struct {
	rows          func(lo, hi int) []float32
	dim           int
	int8          bool
	scale, offset []float32
	memo          map[[2]int]canaryScore

	qi     int
	q, qh  []float64 // the query; fp16(q), or fp16(q∘scale) over int8 codes
	qoff   float64   // Σ q·offset (int8)
	h      []uint16
	tmp    []float32
	scored []canaryScore
}

type canaryScore struct {
	row          int32
	exact, bound float64
}

func (s *canaryScorer) setQuery(qi int, q []float32) {
	d := s.dim
	s.qi = qi
	s.q, s.qh, s.h, s.tmp = make([]float64, d), make([]float64, d), make([]uint16, d), make([]float32, d)
	s.qoff = 0
	for j, v := range q {
		s.q[j] = float64(v)
		s.tmp[j] = v
		if s.int8 {
			s.tmp[j] = v * s.scale[j]
			s.qoff += float64(v) * float64(s.offset[j])
		}
	}
	kernels.F32ToF16Ref(s.h, s.tmp)
	for j, b := range s.h {
		s.qh[j] = float64(float16.Frombits(b).Float32())
	}
}

// score is ⟨q, x_row⟩ in float64 and the bound e(row) + canaryFloor of
// the GPU's arithmetic (Canary).
func (s *canaryScorer) score(row int32) canaryScore {
	if c, ok := s.memo[[2]int{s.qi, int(row)}]; ok {
		return c
	}
	x := s.rows(int(row), int(row)+1)
	var exact, e, acc float64
	if !s.int8 {
		kernels.F32ToF16Ref(s.h, x)
	}
	for j, xv := range x {
		qj, xj := s.q[j], float64(xv)
		exact += qj * xj
		if s.int8 {
			sj := float64(s.scale[j])
			var c float64
			if sj != 0 {
				c = math.Round((xj - float64(s.offset[j])) / sj)
			}
			e += math.Abs(s.qh[j]-qj*sj) * math.Abs(c)
			acc += math.Abs(s.qh[j] * c)
			continue
		}
		xh := float64(float16.Frombits(s.h[j]).Float32())
		e += math.Abs(s.qh[j]-qj)*math.Abs(xh) + math.Abs(qj)*math.Abs(xh-xj)
		acc += math.Abs(s.qh[j] * xh)
	}
	e += 2*float64(s.dim)*0x1p-24*acc + 0x1p-24*math.Abs(s.qoff)
	c := canaryScore{row, exact, e + canaryFloor}
	s.memo[[2]int{s.qi, int(row)}] = c
	return c
}

// compare checks one query's GPU hits against the reference candidates
// (the exact top-k over the reference rows): it returns the largest
// |Δ score| and the largest bound, and an error naming the first
// difference.
func (s *canaryScorer) compare(hits, cands []rlsearch.Hit, want, n int) (float64, float64, error) {
	if len(hits) != want {
		return 0, 0, fmt.Errorf("%d hits, want %d", len(hits), want)
	}
	byRow := map[int32]canaryScore{}
	var worst, bar float64
	for i, h := range hits {
		_, dup := byRow[h.Row]
		switch {
		case h.Row < 0 || int(h.Row) >= n:
			return worst, bar, fmt.Errorf("rank %d: row %d outside the vector file's %d rows", i, h.Row, n)
		case dup:
			return worst, bar, fmt.Errorf("rank %d: row %d returned twice", i, h.Row)
		case math.IsNaN(float64(h.Score)) || math.IsInf(float64(h.Score), 0):
			return worst, bar, fmt.Errorf("rank %d: row %d score %v", i, h.Row, h.Score)
		case i > 0 && rlsearch.CompareHits(hits[i-1], h) >= 0:
			return worst, bar, fmt.Errorf("rank %d: row %d score %.7g after row %d score %.7g: out of order (descending score, equal scores by ascending row)", i, h.Row, h.Score, hits[i-1].Row, hits[i-1].Score)
		}
		c := s.score(h.Row)
		byRow[h.Row] = c
		d := math.Abs(float64(h.Score) - c.exact)
		worst, bar = max(worst, d), max(bar, c.bound)
		if d > c.bound {
			return worst, bar, fmt.Errorf("rank %d: row %d score %.7g, CPU exact score of that row %.7g (|Δ| %.3g above its bound %.3g)", i, h.Row, h.Score, c.exact, d, c.bound)
		}
	}
	for _, c := range cands {
		if _, ok := byRow[c.Row]; !ok {
			byRow[c.Row] = s.score(c.Row)
		}
	}
	exp := s.scored[:0]
	for _, v := range byRow {
		exp = append(exp, v)
		bar = max(bar, v.bound)
	}
	s.scored = exp
	slices.SortFunc(exp, func(a, b canaryScore) int {
		switch {
		case a.exact > b.exact:
			return -1
		case a.exact < b.exact:
			return 1
		}
		return int(a.row) - int(b.row)
	})
	for i, h := range hits {
		e := exp[i]
		if h.Row == e.row {
			continue
		}
		if gx := byRow[h.Row].exact; math.Abs(gx-e.exact) > 2*bar {
			return worst, bar, fmt.Errorf("rank %d: expected row %d score %.7g, got row %d score %.7g (CPU exact %.7g; a swap needs the scores within %.3g)", i, e.row, e.exact, h.Row, h.Score, gx, 2*bar)
		}
	}
	return worst, bar, nil
}
