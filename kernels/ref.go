package kernels

import (
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
	type ent struct {
		key uint32
		row int32
		idx int
	}
	nSeg := (a.Len + a.SegLen - 1) / a.SegLen
	var buf []ent
	for q := 0; q < a.NQ; q++ {
		for s := 0; s < nSeg; s++ {
			lo := s * a.SegLen
			hi := min(lo+a.SegLen, a.Len)
			buf = buf[:0]
			for i := lo; i < hi; i++ {
				row := int32(a.RowBase + i)
				if a.Rows != nil {
					row = a.Rows[q*a.LdS+i]
				}
				key := Key(a.Scores[q*a.LdS+i])
				if a.Rows != nil && row < 0 {
					key = 0
				}
				if key == 0 {
					continue
				}
				buf = append(buf, ent{key, row, i})
			}
			// Selection: keys descending, equal keys by index.
			slices.SortFunc(buf, func(x, y ent) int {
				if x.key != y.key {
					if x.key > y.key {
						return -1
					}
					return 1
				}
				return x.idx - y.idx
			})
			take := buf[:min(a.K, len(buf))]
			// Output order: keys descending, equal keys by row.
			slices.SortFunc(take, func(x, y ent) int {
				if x.key != y.key {
					if x.key > y.key {
						return -1
					}
					return 1
				}
				return int(x.row) - int(y.row)
			})
			out := q*a.LdOut + s*a.K
			for i := 0; i < a.K; i++ {
				if i < len(take) {
					a.OutS[out+i] = Unkey(take[i].key)
					a.OutR[out+i] = take[i].row
				} else {
					a.OutS[out+i] = float32(math.Inf(-1))
					a.OutR[out+i] = -1
				}
			}
		}
	}
	return nil
}
