package kernels

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/x448/float16"
)

// F32ToF16Ref is the reference of rls_f32_to_f16: dst[i] = binary16 of
// src[i], round to nearest even (x448/float16, like __float2half_rn).
// len(dst) must be ≥ len(src).
func F32ToF16Ref(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = float16.Fromfloat32(v).Bits()
	}
}

// Key is rls_key: an order-preserving uint32 of a score (larger score,
// larger key), -0 mapped to +0, and 0 for NaN (never ranks).
func Key(f float32) uint32 {
	u := math.Float32bits(f)
	if u == 0x80000000 {
		u = 0
	}
	if u&0x7fffffff > 0x7f800000 {
		return 0
	}
	if u&0x80000000 != 0 {
		return ^u
	}
	return u | 0x80000000
}

// CompareKeyRow is the order of rls_topk's output and of every host-side
// merge of its results: larger key (so larger score, see Key) first, ties
// by smaller row; -1 when (ka, ra) comes first, +1 after, 0 when equal.
// It orders (Key(score), row) pairs exactly as rlsearch.CompareHits orders
// hits, except that -0 and +0 are one key.
func CompareKeyRow(ka uint32, ra int32, kb uint32, rb int32) int {
	if ka != kb {
		return cmp.Compare(kb, ka)
	}
	return cmp.Compare(ra, rb)
}

// Unkey is rls_unkey, the inverse of Key on keys > 0.
func Unkey(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k & 0x7fffffff)
	}
	return math.Float32frombits(^k)
}

// TopKRefArgs mirrors TopKArgs with host slices in place of device
// pointers. Scores, Rows, OutS and OutR are indexed exactly like the device
// arrays (query q's list starts at q·LdS, its output at q·LdOut).
type TopKRefArgs struct {
	Scores  []float32
	Rows    []int32 // nil: implicit rows RowBase + index
	LdS     int
	Len     int
	SegLen  int
	RowBase int
	K       int
	NQ      int
	OutS    []float32
	OutR    []int32
	LdOut   int
}

// TopKRef is the reference of rls_topk, selecting the same entries in the
// same order: per (query q, segment s), the min(K, valid) entries with the
// largest keys, taking equal keys in index order (which equals ascending
// row order under rls_topk's precondition), written sorted by (score desc,
// row asc) into K slots; the rest get score -Inf and row -1. It reads each
// segment completely before writing, so in-place use matches the kernel.
func TopKRef(a TopKRefArgs) error {
	if a.K < 1 || a.Len < 1 || a.SegLen < 1 || a.NQ < 1 {
		return fmt.Errorf("kernels: topk ref k=%d len=%d segLen=%d nq=%d", a.K, a.Len, a.SegLen, a.NQ)
	}
	// Entries are packed as uint64 so that an ascending integer sort gives
	// the order wanted: (^key)<<32 | index for the selection (key desc,
	// index asc), (^key)<<32 | row for the output (key desc, row asc; rows
	// of valid entries are ≥ 0).
	nSeg := (a.Len + a.SegLen - 1) / a.SegLen
	var sel, rowOf []uint64
	for q := 0; q < a.NQ; q++ {
		for s := 0; s < nSeg; s++ {
			lo := s * a.SegLen
			hi := min(lo+a.SegLen, a.Len)
			sel = sel[:0]
			for i := lo; i < hi; i++ {
				key := Key(a.Scores[q*a.LdS+i])
				if a.Rows != nil && a.Rows[q*a.LdS+i] < 0 {
					key = 0
				}
				if key == 0 {
					continue
				}
				sel = append(sel, uint64(^key)<<32|uint64(i-lo))
			}
			slices.Sort(sel)
			take := sel[:min(a.K, len(sel))]
			rowOf = rowOf[:0]
			for _, e := range take {
				i := lo + int(uint32(e))
				row := int32(a.RowBase + i)
				if a.Rows != nil {
					row = a.Rows[q*a.LdS+i]
				}
				rowOf = append(rowOf, e&^0xffffffff|uint64(uint32(row)))
			}
			slices.Sort(rowOf)
			out := q*a.LdOut + s*a.K
			for i := 0; i < a.K; i++ {
				if i < len(rowOf) {
					a.OutS[out+i] = Unkey(^uint32(rowOf[i] >> 32))
					a.OutR[out+i] = int32(uint32(rowOf[i]))
				} else {
					a.OutS[out+i] = float32(math.Inf(-1))
					a.OutR[out+i] = -1
				}
			}
		}
	}
	return nil
}

// PairLess reports whether a ranks before b: larger key, then smaller row.
func PairLess(a, b Pair) bool { return a.Key > b.Key || (a.Key == b.Key && a.Row < b.Row) }

// FilterRefArgs mirrors FilterArgs and the ScanState fields rls_filter
// uses, with host slices indexed like the device arrays.
type FilterRefArgs struct {
	Scores  []float32 // query qi's scores at qi·LdS
	LdS     int
	Rows    int
	RowBase int
	NQ      int
	Theta   []uint32 // [NQ]
	Cand    []Pair   // [NQ·Cap]
	Count   []int32  // [NQ]
	Cap     int
}

// FilterRef is the reference of rls_filter: for each query qi and i < Rows,
// a score whose Key exceeds Theta[qi] is appended (Key, RowBase + i) at
// Cand[qi·Cap + Count[qi]] if that slot is below Cap, and Count[qi] grows
// by one either way. The kernel appends in an unspecified order: compare
// the survivors as sets (SortPairs).
func FilterRef(a FilterRefArgs) {
	for qi := 0; qi < a.NQ; qi++ {
		for i := 0; i < a.Rows; i++ {
			appendSurvivor(a.Cand, a.Count, a.Cap, qi, Key(a.Scores[qi*a.LdS+i]), a.Theta[qi], int32(a.RowBase+i))
		}
	}
}

func appendSurvivor(cand []Pair, count []int32, cap, q int, key, theta uint32, row int32) {
	if key <= theta {
		return
	}
	if p := int(count[q]); p < cap {
		cand[q*cap+p] = Pair{key, row}
	}
	count[q]++
}

// ScanRefArgs mirrors ScanArgs with host slices: Corpus [rows, Dim] and Q
// [NQ, Dim] hold fp16 values (widened to float32, as the kernel reads
// them).
type ScanRefArgs struct {
	Corpus       []float32
	Dim          int
	RowLo, RowHi int
	Q            []float32
	NQ           int
	Theta        []uint32
	Cand         []Pair
	Count        []int32
	Cap          int
}

// ScanRef is the reference of rls_scan16/64/128: score(q, row) =
// Σ_j Corpus[row][j]·Q[q][j] accumulated in float32 (the kernel's
// tensor-core order differs: equal results need scores that are exact in
// float32, such as small multiples of 1/2), then FilterRef's rule for every
// row of [RowLo, RowHi).
func ScanRef(a ScanRefArgs) { scanRef(a, nil) }

// scanRef is ScanRef with qoff[q] added to each sum when qoff is not nil.
func scanRef(a ScanRefArgs, qoff []float32) {
	d := a.Dim
	for qi := 0; qi < a.NQ; qi++ {
		qv := a.Q[qi*d : (qi+1)*d]
		for row := a.RowLo; row < a.RowHi; row++ {
			x := a.Corpus[row*d : (row+1)*d]
			var s float32
			for j, v := range qv {
				s += v * x[j]
			}
			if qoff != nil {
				s += qoff[qi]
			}
			appendSurvivor(a.Cand, a.Count, a.Cap, qi, Key(s), a.Theta[qi], int32(row))
		}
	}
}

// ScanI8RefArgs mirrors ScanArgs for the int8 kernels: Codes [rows, Dim]
// int8; Q [NQ, Dim] the fp16 values of q∘scale widened to float32 in
// natural order (not I8Perm's); QOff [NQ].
type ScanI8RefArgs struct {
	Codes        []int8
	Dim          int
	RowLo, RowHi int
	Q, QOff      []float32
	NQ           int
	Theta        []uint32
	Cand         []Pair
	Count        []int32
	Cap          int
}

// ScanI8Ref is the reference of rls_scan16_i8/64_i8/128_i8: score(q, row)
// = Σ_j Codes[row][j]·Q[q][j] accumulated in float32, plus QOff[q], then
// FilterRef's rule for every row of [RowLo, RowHi) (equal results need
// sums exact in float32, as for ScanRef).
func ScanI8Ref(a ScanI8RefArgs) {
	codes := make([]float32, len(a.Codes)) // exact
	for i, c := range a.Codes {
		codes[i] = float32(c)
	}
	scanRef(ScanRefArgs{Corpus: codes, Dim: a.Dim, RowLo: a.RowLo, RowHi: a.RowHi, Q: a.Q, NQ: a.NQ, Theta: a.Theta,
		Cand: a.Cand, Count: a.Count, Cap: a.Cap}, a.QOff)
}

// MergeRefArgs mirrors ScanState for rls_merge with host slices.
type MergeRefArgs struct {
	Best  []Pair // [NQ·K], sorted, Row -1 = empty
	K     int
	Cand  []Pair // [NQ·Cap]
	Count []int32
	Cap   int
	Theta []uint32
	Flags []int32
	NQ    int
}

// MergeRef is the reference of rls_merge: for each query with Count > 0,
// the best list becomes the first min(K, n) of best ∪ Cand[:min(Count,
// Cap)] in PairLess order (padded with (0, -1)), Theta the Key of entry K-1
// (0 while fewer than K), Count 0, and Flags bit 0 is set when Count > Cap.
// It returns an error if a row appears twice (the pipeline scans every row
// once; the kernel would keep both).
func MergeRef(a MergeRefArgs) error {
	var all []Pair
	for q := 0; q < a.NQ; q++ {
		raw := int(a.Count[q])
		if raw == 0 {
			continue
		}
		best := a.Best[q*a.K : (q+1)*a.K]
		all = all[:0]
		for _, e := range best {
			if e.Row >= 0 {
				all = append(all, e)
			}
		}
		all = append(all, a.Cand[q*a.Cap:q*a.Cap+min(raw, a.Cap)]...)
		seen := make(map[int32]bool, len(all))
		for _, e := range all {
			if seen[e.Row] {
				return fmt.Errorf("kernels: merge ref: query %d has row %d twice", q, e.Row)
			}
			seen[e.Row] = true
		}
		SortPairs(all)
		want := min(a.K, len(all))
		for i := range best {
			if i < want {
				best[i] = all[i]
			} else {
				best[i] = Pair{0, -1}
			}
		}
		a.Theta[q] = 0
		if want == a.K {
			a.Theta[q] = best[a.K-1].Key
		}
		a.Count[q] = 0
		if raw > a.Cap {
			a.Flags[q] |= 1
		}
	}
	return nil
}

// SortPairs sorts p in PairLess order.
func SortPairs(p []Pair) {
	slices.SortFunc(p, func(a, b Pair) int {
		if PairLess(a, b) {
			return -1
		}
		if PairLess(b, a) {
			return 1
		}
		return 0
	})
}
