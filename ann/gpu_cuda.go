package ann

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
)

// cudaDevice is one GPU: its owner (cuda.Device), our kernel module, one
// stream, the corpus share and the workspace.
type cudaDevice struct {
	dev *cuda.Device
	ops *cudaOps
}

func openCUDADevice(ordinal, dim, rows int, i8 *int8Quant, logf func(string, ...any)) (*cudaDevice, error) {
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("ann: GPU index: %w", err)
	}
	o := &cudaOps{dim: dim, rows: rows, i8: i8, es: 2}
	if i8 != nil {
		o.es = 1
	}
	err = dev.Do(func(c *cuda.Ctx) error {
		var err error
		if o.mod, err = kernels.Load(c); err != nil {
			return err
		}
		if o.stream, err = c.NewStream(); err != nil {
			return err
		}
		if o.stream2, err = c.NewStream(); err != nil {
			return err
		}
		if o.evStart, err = c.NewEvent(false); err != nil {
			return err
		}
		for i := range o.evGemm {
			if o.evGemm[i], err = c.NewEvent(false); err != nil {
				return err
			}
			if o.evFilt[i], err = c.NewEvent(false); err != nil {
				return err
			}
		}
		if rows > 0 {
			if o.corpus, err = c.Alloc(int64(rows) * int64(dim) * int64(o.es)); err != nil {
				return fmt.Errorf("corpus share of %d rows × %d values of %d bytes: %w", rows, dim, o.es, err)
			}
		}
		for i := range o.stage {
			if o.stage[i], err = c.AllocHost(gpuStageBytes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("ann: GPU %d: %w", ordinal, err)
	}
	if lib, err := cuda.CUBLASLibrary(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("ann: GPU index: %w", err)
	} else {
		in := dev.Info()
		logf("ann: GPU %d: %s (sm_%d%d, %d SMs, %d MiB), kernels %s, %s", ordinal, in.Name, in.Major, in.Minor, in.SMs, in.TotalMem>>20, o.mod.Image, lib)
	}
	return &cudaDevice{dev: dev, ops: o}, nil
}

func (d *cudaDevice) l2Bytes() int { return d.dev.Info().L2Bytes }

func (d *cudaDevice) name() string {
	in := d.dev.Info()
	return fmt.Sprintf("GPU %d (%s)", in.Ordinal, in.Name)
}

func (d *cudaDevice) freeBytes() (int64, error) {
	var free int64
	err := d.dev.Do(func(c *cuda.Ctx) error {
		var err error
		free, _, err = c.MemInfo()
		return err
	})
	return free, err
}

func (d *cudaDevice) run(fn func(o gpuOps) error) error {
	return d.dev.Do(func(c *cuda.Ctx) error {
		d.ops.c = c
		defer func() { d.ops.c = nil }()
		return fn(d.ops)
	})
}

// close frees everything: cuda.Device.Close releases all buffers, streams
// and the module still open on the device.
func (d *cudaDevice) close() error { return d.dev.Close() }

// cudaOps implements gpuOps with cuBLAS and our kernels on one stream (a
// second one for the tiled path's filters). c is set only while running on
// the owner goroutine.
type cudaOps struct {
	c         *cuda.Ctx
	mod       *kernels.Module
	stream    *cuda.Stream
	stream2   *cuda.Stream
	dim, rows int
	i8        *int8Quant          // int8 corpus (GPUConfig.Int8), else nil
	es        int                 // bytes per corpus value: 2, or 1 for int8
	corpus    *cuda.Buffer        // fp16 or int8 [rows, dim]
	stage     [2]*cuda.HostBuffer // pinned upload staging
	stageUsed [2]bool
	next      int

	plan             gpuPlan
	hq               *cuda.HostBuffer // pinned fp32 queries [maxBatch, dim]
	q32, q16, scores *cuda.Buffer
	qoff             *cuda.Buffer // int8: fp32 [maxBatch] query offsets
	cs, cr, os, or   *cuda.Buffer
	hostScores       []byte // host copy of one query's score row (k > KMax path)

	// threshold pipeline (gpu_scan.go)
	best, theta, count, flags, cand *cuda.Buffer
	evStart                         *cuda.Event
	evGemm, evFilt                  [2]*cuda.Event
	filtUsed                        [2]bool
	tile                            int  // tiles filtered since scanBegin
	tiled                           bool // this batch filters on stream2
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (o *cudaOps) upload(row0 int, f16 []byte) error {
	off := int64(row0) * int64(o.dim) * int64(o.es)
	for len(f16) > 0 {
		i := o.next
		o.next ^= 1
		if o.stageUsed[i] { // the copy from this staging buffer may still run
			if err := o.c.Sync(o.stream); err != nil {
				return err
			}
			o.stageUsed = [2]bool{}
		}
		n := copy(o.stage[i].Bytes(), f16)
		if err := o.c.CopyHtoDAsync(o.corpus, off, o.stage[i], 0, int64(n), o.stream); err != nil {
			return err
		}
		o.stageUsed[i] = true
		off += int64(n)
		f16 = f16[n:]
	}
	return nil
}

func (o *cudaOps) uploadDone() error {
	if err := o.c.Sync(o.stream); err != nil {
		return err
	}
	o.stageUsed = [2]bool{}
	for i, s := range o.stage {
		s.Close() // staging is not needed after the upload
		o.stage[i] = nil
	}
	return nil
}

func (o *cudaOps) reserve(p gpuPlan) error {
	if o.plan == p && o.scores != nil {
		return nil
	}
	for _, b := range []*cuda.Buffer{o.q32, o.q16, o.qoff, o.scores, o.cs, o.cr, o.os, o.or, o.best, o.theta, o.count, o.flags, o.cand} {
		if b != nil {
			b.Close()
		}
	}
	if o.hq != nil {
		o.hq.Close()
	}
	o.plan = p
	b := int64(p.maxBatch)
	var err error
	alloc := func(dst **cuda.Buffer, bytes int64) {
		if err == nil {
			*dst, err = o.c.Alloc(bytes)
		}
	}
	alloc(&o.q32, b*int64(p.dim)*4)
	alloc(&o.q16, int64(p.qRows)*int64(p.dim)*2)
	alloc(&o.qoff, b*4)
	alloc(&o.scores, int64(p.scoreFloats())*4)
	alloc(&o.cs, b*int64(p.candLd)*4)
	alloc(&o.cr, b*int64(p.candLd)*4)
	alloc(&o.os, b*kernels.KMax*4)
	alloc(&o.or, b*kernels.KMax*4)
	alloc(&o.best, b*kernels.KMax*kernels.PairBytes)
	alloc(&o.theta, b*4)
	alloc(&o.count, b*4)
	alloc(&o.flags, b*4)
	alloc(&o.cand, int64(p.scanEntries)*kernels.PairBytes)
	if err == nil {
		o.hq, err = o.c.AllocHost(p.maxBatch * p.dim * 4)
	}
	return err
}

func (o *cudaOps) putQueries(q []float32, nq int) error {
	n := nq * o.dim
	hb := o.hq.Bytes()
	if o.i8 != nil {
		// Packed on the host (nq·dim multiplies): fp16 queries, then the
		// offsets, through the pinned buffer (2n + 4nq ≤ 4n bytes).
		packed, qoff := make([]uint16, n), make([]float32, nq)
		if err := kernels.PackI8Queries(packed, qoff, q, nq, o.dim, o.i8.scale, o.i8.offset); err != nil {
			return err
		}
		for i, h := range packed {
			binary.LittleEndian.PutUint16(hb[2*i:], h)
		}
		for i, v := range qoff {
			binary.LittleEndian.PutUint32(hb[2*n+4*i:], math.Float32bits(v))
		}
		if err := o.c.CopyHtoDAsync(o.q16, 0, o.hq, 0, int64(2*n), o.stream); err != nil {
			return err
		}
		return o.c.CopyHtoDAsync(o.qoff, 0, o.hq, int64(2*n), int64(4*nq), o.stream)
	}
	if littleEndian {
		copy(hb, unsafe.Slice((*byte)(unsafe.Pointer(&q[0])), 4*n))
	} else {
		for i, v := range q[:n] {
			binary.LittleEndian.PutUint32(hb[4*i:], math.Float32bits(v))
		}
	}
	if err := o.c.CopyHtoDAsync(o.q32, 0, o.hq, 0, int64(4*n), o.stream); err != nil {
		return err
	}
	return o.mod.F32ToF16(o.c, o.stream, o.q32.Ptr(0), o.q16.Ptr(0), n)
}

// gemm: the corpus share is row-major [rows, dim] fp16, i.e. column-major
// [dim, rows]; S (column-major [rows, nq], ld rows) = D_tileᵀ · Q.
func (o *cudaOps) gemm(lo, rows, nq int) error {
	if o.i8 != nil {
		return errNoInt8GEMM
	}
	return o.c.GemmF16(o.stream, true, false, rows, nq, o.dim, 1,
		o.corpus.Ptr(int64(lo)*int64(o.dim)*2), o.dim, o.q16.Ptr(0), o.dim, 0, o.scores.Ptr(0), rows)
}

func (o *cudaOps) region(b gpuBuf, off int) (cuda.DevPtr, cuda.DevPtr) {
	o4 := int64(off) * 4
	switch b {
	case bufScores:
		return o.scores.Ptr(o4), 0
	case bufCand:
		return o.cs.Ptr(o4), o.cr.Ptr(o4)
	}
	return o.os.Ptr(o4), o.or.Ptr(o4)
}

func (o *cudaOps) topk(c topkCall) error {
	ss, sr := o.region(c.src, c.srcOff)
	ds, dr := o.region(c.dst, c.dstOff)
	return o.mod.TopK(o.c, o.stream, kernels.TopKArgs{Scores: ss, Rows: sr, LdS: int64(c.ldS), Len: c.len, SegLen: c.segLen,
		RowBase: c.rowBase, K: c.k, NQ: c.nq, OutS: ds, OutR: dr, LdOut: int64(c.ldOut)})
}

func (o *cudaOps) readScores(dst []float32, qi, rows int) error {
	if err := o.c.Sync(o.stream); err != nil {
		return err
	}
	if cap(o.hostScores) < 4*rows {
		o.hostScores = make([]byte, 4*rows)
	}
	b := o.hostScores[:4*rows]
	if err := o.c.CopyDtoH(b, o.scores, int64(qi)*int64(rows)*4); err != nil {
		return err
	}
	for i := range dst[:rows] {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

func (o *cudaOps) readOut(s []float32, r []int32, nq, k int) error {
	if err := o.c.Sync(o.stream); err != nil {
		return err
	}
	b := make([]byte, 4*nq*k)
	if err := o.c.CopyDtoH(b, o.os, 0); err != nil {
		return err
	}
	for i := range s[:nq*k] {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	if err := o.c.CopyDtoH(b, o.or, 0); err != nil {
		return err
	}
	kernels.DecodeInt32s(r[:nq*k], b)
	return nil
}

func (o *cudaOps) scanState(nq, k, cap int) kernels.ScanState {
	return kernels.ScanState{Best: o.best.Ptr(0), Theta: o.theta.Ptr(0), Count: o.count.Ptr(0), Flags: o.flags.Ptr(0),
		Cand: o.cand.Ptr(0), NQ: nq, K: k, Cap: cap}
}

func (o *cudaOps) scanBegin(nq, k int, tiled bool) error {
	o.tiled, o.tile, o.filtUsed = tiled, 0, [2]bool{}
	if err := o.mod.ScanInit(o.c, o.stream, o.scanState(nq, k, 1)); err != nil {
		return err
	}
	if !tiled {
		return nil
	}
	// The filters (stream2) run after the queries and the init (stream).
	if err := o.c.Record(o.evStart, o.stream); err != nil {
		return err
	}
	return o.c.WaitEvent(o.stream2, o.evStart)
}

func (o *cudaOps) scan(cfg, lo, hi, nq, cap int) error {
	st := o.scanState(nq, 1, cap)
	a := kernels.ScanArgs{Corpus: o.corpus.Ptr(0), Dim: o.dim, RowLo: lo, RowHi: hi, Q: o.q16.Ptr(0), NQ: nq,
		Theta: st.Theta, Cand: st.Cand, Count: st.Count, Cap: cap}
	if kernels.ScanConfigs[cfg].Int8 != (o.i8 != nil) {
		return fmt.Errorf("ann: scan kernel %s over a corpus that is not its type", kernels.ScanConfigs[cfg].Name)
	}
	if o.i8 != nil {
		a.QOff = o.qoff.Ptr(0)
	}
	return o.mod.Scan(o.c, o.stream, cfg, a)
}

// tileFilter: GEMM into tile buffer b = tile mod 2 on stream (after the
// filter that last read b), filter on stream2 (after that GEMM).
func (o *cudaOps) tileFilter(lo, rows, ld, nq, cap int) error {
	if o.i8 != nil {
		return errNoInt8GEMM
	}
	b := o.tile & 1
	o.tile++
	if int64(2*nq*ld)*4 > o.scores.Len() || rows > ld {
		return fmt.Errorf("ann: two score tiles of %d × %d exceed the score buffer of %d bytes", nq, ld, o.scores.Len())
	}
	dst := o.scores.Ptr(int64(b) * int64(nq) * int64(ld) * 4)
	if o.filtUsed[b] {
		if err := o.c.WaitEvent(o.stream, o.evFilt[b]); err != nil {
			return err
		}
	}
	if err := o.c.GemmF16(o.stream, true, false, rows, nq, o.dim, 1, o.corpus.Ptr(int64(lo)*int64(o.dim)*2), o.dim, o.q16.Ptr(0), o.dim, 0, dst, ld); err != nil {
		return err
	}
	if err := o.c.Record(o.evGemm[b], o.stream); err != nil {
		return err
	}
	if err := o.c.WaitEvent(o.stream2, o.evGemm[b]); err != nil {
		return err
	}
	if err := o.mod.Filter(o.c, o.stream2, kernels.FilterArgs{Scores: dst, LdS: int64(ld), Rows: rows, RowBase: lo, NQ: nq}, o.scanState(nq, 1, cap)); err != nil {
		return err
	}
	o.filtUsed[b] = true
	return o.c.Record(o.evFilt[b], o.stream2)
}

func (o *cudaOps) merge(nq, k, cap int) error {
	s := o.stream
	if o.tiled {
		s = o.stream2
	}
	return o.mod.Merge(o.c, s, o.scanState(nq, k, cap))
}

func (o *cudaOps) readScan(nq, k int) ([]kernels.Pair, []int32, error) {
	if err := o.c.Sync(o.stream); err != nil {
		return nil, nil, err
	}
	if err := o.c.Sync(o.stream2); err != nil {
		return nil, nil, err
	}
	b := make([]byte, nq*k*kernels.PairBytes)
	if err := o.c.CopyDtoH(b, o.best, 0); err != nil {
		return nil, nil, err
	}
	best := make([]kernels.Pair, nq*k)
	kernels.DecodePairs(best, b)
	fb := make([]byte, 4*nq)
	if err := o.c.CopyDtoH(fb, o.flags, 0); err != nil {
		return nil, nil, err
	}
	flags := make([]int32, nq)
	kernels.DecodeInt32s(flags, fb)
	return best, flags, nil
}

func (o *cudaOps) readCand(nq, cap int) ([]kernels.Pair, []int32, error) {
	if err := o.c.Sync(o.stream); err != nil {
		return nil, nil, err
	}
	nb := make([]byte, 4*nq)
	if err := o.c.CopyDtoH(nb, o.count, 0); err != nil {
		return nil, nil, err
	}
	count := make([]int32, nq)
	kernels.DecodeInt32s(count, nb)
	cand := make([]kernels.Pair, nq*cap)
	b := make([]byte, cap*kernels.PairBytes)
	for qi := 0; qi < nq; qi++ {
		n := min(int(count[qi]), cap)
		if n == 0 {
			continue
		}
		if err := o.c.CopyDtoH(b[:n*kernels.PairBytes], o.cand, int64(qi)*int64(cap)*kernels.PairBytes); err != nil {
			return nil, nil, err
		}
		kernels.DecodePairs(cand[qi*cap:qi*cap+n], b)
	}
	return cand, count, nil
}

func (o *cudaOps) close() error { return nil } // cudaDevice.close frees everything
