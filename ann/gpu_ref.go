package ann

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/kernels"
)

// errNoInt8GEMM: the paths that need a cuBLAS GEMM do not exist over an
// int8 corpus (choosePath never picks them).
var errNoInt8GEMM = errors.New("ann: no GEMM over an int8 corpus (fused path only)")

// refOps implements gpuOps on the host with the plain-Go kernel references
// (kernels.F32ToF16Ref, kernels.TopKRef) and an fp32-accumulating fp16 GEMM
// loop standing in for cublasGemmEx. It exists so that the tiling, merge,
// batching and multi-device code of the GPU index is tested on machines
// without a GPU; it is not a fast CPU index (use Flat).
type refOps struct {
	dim    int
	corpus []float32 // this share's rows, fp16 values widened (as the GPU reads them), or int8 codes
	i8     *int8Quant
	qoff   []float32 // int8: Σ q·offset per query (kernels.PackI8Queries)
	plan   gpuPlan
	q      []float32 // fp16-rounded queries, widened
	scores []float32
	cs     []float32
	cr     []int32
	os     []float32
	or     []int32

	// memo keeps score tiles for the current query block: tests search
	// the same queries with many k, and the reference GEMM is the cost.
	memoQ []float32
	memo  map[[3]int][]float32

	// threshold pipeline state (kernels.ScanState on the device)
	best  []kernels.Pair
	theta []uint32
	count []int32
	flags []int32
	cand  []kernels.Pair

	// fault makes this a faulty device for the search canary's tests:
	// faultWrong adds 0.05 to the score of local row faultRow,
	// faultDrop makes it NaN (the row never ranks), faultSwap swaps the
	// first two entries of equal score of each best list the GPU
	// selection returns (a tie broken by descending row).
	fault    string
	faultRow int
}

// Faults of refOps.fault.
const (
	faultWrong = "wrong"
	faultDrop  = "drop"
	faultSwap  = "swap"
)

func newRefOps(dim, rows int, i8 *int8Quant) *refOps {
	return &refOps{dim: dim, corpus: make([]float32, rows*dim), i8: i8}
}

func (o *refOps) upload(row0 int, f16 []byte) error {
	if o.i8 != nil {
		if row0 < 0 || row0*o.dim+len(f16) > len(o.corpus) {
			return fmt.Errorf("ann: upload rows at %d beyond the share", row0)
		}
		for i, b := range f16 {
			o.corpus[row0*o.dim+i] = float32(int8(b))
		}
		return nil
	}
	if row0 < 0 || row0*o.dim+len(f16)/2 > len(o.corpus) {
		return fmt.Errorf("ann: upload rows at %d beyond the share", row0)
	}
	for i := range len(f16) / 2 {
		o.corpus[row0*o.dim+i] = float16.Frombits(binary.LittleEndian.Uint16(f16[2*i:])).Float32()
	}
	return nil
}

func (o *refOps) uploadDone() error { return nil }

func (o *refOps) reserve(p gpuPlan) error {
	if o.plan == p {
		return nil
	}
	o.plan = p
	o.q = make([]float32, p.maxBatch*p.dim)
	o.scores = make([]float32, p.scoreFloats())
	o.cs = make([]float32, p.maxBatch*p.candLd)
	o.cr = make([]int32, p.maxBatch*p.candLd)
	o.os = make([]float32, p.maxBatch*kernels.KMax)
	o.or = make([]int32, p.maxBatch*kernels.KMax)
	return nil
}

func (o *refOps) putQueries(q []float32, nq int) error {
	h := make([]uint16, nq*o.dim)
	if o.i8 != nil {
		// The offsets as the kernels get them; the scaled queries in natural
		// order (the reference needs no I8Perm).
		o.qoff = make([]float32, nq)
		if err := kernels.PackI8Queries(make([]uint16, nq*o.dim), o.qoff, q, nq, o.dim, o.i8.scale, o.i8.offset); err != nil {
			return err
		}
		qs := make([]float32, nq*o.dim)
		for i, v := range q[:nq*o.dim] {
			qs[i] = v * o.i8.scale[i%o.dim]
		}
		q = qs
	}
	kernels.F32ToF16Ref(h, q[:nq*o.dim])
	for i, b := range h {
		o.q[i] = float16.Frombits(b).Float32()
	}
	if !slices.Equal(o.memoQ, o.q[:nq*o.dim]) {
		o.memoQ = slices.Clone(o.q[:nq*o.dim])
		o.memo = map[[3]int][]float32{}
	}
	return nil
}

func (o *refOps) gemm(lo, rows, nq int) error {
	if o.i8 != nil {
		return errNoInt8GEMM
	}
	copy(o.scores, o.scoreRows(lo, rows, nq))
	return nil
}

// scoreRows is the reference GEMM: query qi's scores of rows [lo, lo+rows)
// at [qi·rows, (qi+1)·rows), float32 sums in dimension order (memoised).
func (o *refOps) scoreRows(lo, rows, nq int) []float32 {
	d := o.dim
	key := [3]int{lo, rows, nq}
	if m, ok := o.memo[key]; ok {
		return m
	}
	out := make([]float32, nq*rows)
	for qi := 0; qi < nq; qi++ {
		qv := o.q[qi*d : (qi+1)*d]
		for r := 0; r < rows; r++ {
			x := o.corpus[(lo+r)*d : (lo+r+1)*d]
			var s float32
			for j, v := range qv {
				s += v * x[j]
			}
			if o.i8 != nil {
				s += o.qoff[qi] // as ScanI8Ref: the sum, then the offset
			}
			out[qi*rows+r] = s
		}
		if f := o.faultRow - lo; f >= 0 && f < rows {
			switch o.fault {
			case faultWrong:
				out[qi*rows+f] += 0.05
			case faultDrop:
				out[qi*rows+f] = float32(math.NaN())
			}
		}
	}
	o.memo[key] = out
	return out
}

func (o *refOps) scanBegin(nq, k int, tiled bool) error {
	if nq > o.plan.maxBatch || k < 1 || k > kernels.KMax {
		return fmt.Errorf("ann: scan begin nq=%d k=%d", nq, k)
	}
	o.best = make([]kernels.Pair, nq*k)
	for i := range o.best {
		o.best[i] = kernels.Pair{Row: -1}
	}
	o.theta = make([]uint32, nq)
	o.count = make([]int32, nq)
	o.flags = make([]int32, nq)
	if len(o.cand) < o.plan.scanEntries {
		o.cand = make([]kernels.Pair, o.plan.scanEntries)
	}
	return nil
}

// filter applies rls_filter's rule to query-major scores of rows
// [lo, lo+rows) (the reference of rls_scan's epilogue too).
func (o *refOps) filter(scores []float32, ld, lo, rows, nq, cap int) error {
	if nq*cap > len(o.cand) || nq > len(o.count) {
		return fmt.Errorf("ann: survivors %d × %d exceed the buffer of %d", nq, cap, len(o.cand))
	}
	kernels.FilterRef(kernels.FilterRefArgs{Scores: scores, LdS: ld, Rows: rows, RowBase: lo, NQ: nq, Theta: o.theta,
		Cand: o.cand, Count: o.count, Cap: cap})
	return nil
}

func (o *refOps) scan(cfg, lo, hi, nq, cap int) error {
	if lo < 0 || hi > len(o.corpus)/o.dim || o.dim%8 != 0 {
		return fmt.Errorf("ann: scan rows [%d, %d) of %d, dim %d", lo, hi, len(o.corpus)/o.dim, o.dim)
	}
	if kernels.ScanConfigs[cfg].Int8 != (o.i8 != nil) {
		return fmt.Errorf("ann: scan kernel %s over a corpus that is not its type", kernels.ScanConfigs[cfg].Name)
	}
	return o.filter(o.scoreRows(lo, hi-lo, nq), hi-lo, lo, hi-lo, nq, cap)
}

func (o *refOps) tileFilter(lo, rows, ld, nq, cap int) error {
	if o.i8 != nil {
		return errNoInt8GEMM
	}
	if rows > ld || 2*nq*ld > len(o.scores) {
		return fmt.Errorf("ann: two score tiles of %d × %d exceed the score buffer of %d", nq, ld, len(o.scores))
	}
	return o.filter(o.scoreRows(lo, rows, nq), rows, lo, rows, nq, cap)
}

func (o *refOps) merge(nq, k, cap int) error {
	return kernels.MergeRef(kernels.MergeRefArgs{Best: o.best, K: k, Cand: o.cand, Count: o.count, Cap: cap, Theta: o.theta, Flags: o.flags, NQ: nq})
}

func (o *refOps) readScan(nq, k int) ([]kernels.Pair, []int32, error) {
	best := slices.Clone(o.best[:nq*k])
	if o.fault == faultSwap {
		for qi := 0; qi < nq; qi++ {
			b := best[qi*k : (qi+1)*k]
			for i := 0; i+1 < k; i++ {
				if b[i].Row >= 0 && b[i+1].Row >= 0 && b[i].Key == b[i+1].Key {
					b[i], b[i+1] = b[i+1], b[i]
					break
				}
			}
		}
	}
	return best, slices.Clone(o.flags[:nq]), nil
}

func (o *refOps) readCand(nq, cap int) ([]kernels.Pair, []int32, error) {
	return slices.Clone(o.cand[:nq*cap]), slices.Clone(o.count[:nq]), nil
}

func (o *refOps) region(b gpuBuf) ([]float32, []int32) {
	switch b {
	case bufScores:
		return o.scores, nil
	case bufCand:
		return o.cs, o.cr
	}
	return o.os, o.or
}

func (o *refOps) topk(c topkCall) error {
	ss, sr := o.region(c.src)
	ds, dr := o.region(c.dst)
	// The device kernels would silently read or write out of bounds: check
	// the layout here, where the tests run.
	nSeg := (c.len + c.segLen - 1) / c.segLen
	spill := c.nq > 1 && (c.srcOff%c.ldS+c.len > c.ldS || c.dstOff%c.ldOut+nSeg*c.k > c.ldOut)
	if spill || c.srcOff+(c.nq-1)*c.ldS+c.len > len(ss) || c.dstOff+(c.nq-1)*c.ldOut+nSeg*c.k > len(ds) {
		return fmt.Errorf("ann: topk layout out of bounds: %+v (src %d, dst %d elements)", c, len(ss), len(ds))
	}
	if sr != nil {
		sr = sr[c.srcOff:]
	}
	return kernels.TopKRef(kernels.TopKRefArgs{Scores: ss[c.srcOff:], Rows: sr, LdS: c.ldS, Len: c.len, SegLen: c.segLen,
		RowBase: c.rowBase, K: c.k, NQ: c.nq, OutS: ds[c.dstOff:], OutR: dr[c.dstOff:], LdOut: c.ldOut})
}

func (o *refOps) readScores(dst []float32, qi, rows int) error {
	copy(dst, o.scores[qi*rows:(qi+1)*rows])
	return nil
}

func (o *refOps) readOut(s []float32, r []int32, nq, k int) error {
	copy(s, o.os[:nq*k])
	copy(r, o.or[:nq*k])
	if o.fault == faultSwap {
		for qi := 0; qi < nq; qi++ {
			for i := qi * k; i+1 < (qi+1)*k; i++ {
				if r[i] >= 0 && r[i+1] >= 0 && s[i] == s[i+1] {
					r[i], r[i+1] = r[i+1], r[i]
					break
				}
			}
		}
	}
	return nil
}

func (o *refOps) close() error {
	*o = refOps{}
	return nil
}
