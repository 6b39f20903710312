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
