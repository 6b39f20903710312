package ann

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/internal/batch"
	"github.com/rlsearch/rlsearch/kernels"
)

// Defaults for GPUConfig fields left zero.
const (
	// DefaultGPUMaxBatch is the queries per GPU pipeline run: 512, the
	// rollout batch of the throughput target (../shared/DESIGN.md, Scale:
	// batch 512 over wiki-18, 21M × 768 fp16 on one H200, is ≈ 16.5
	// TFLOP, a floor of ≈ 21 ms; BenchmarkGPUThroughput measures it).
	DefaultGPUMaxBatch = 512
	// DefaultGPUBatchWait is how long the batcher waits for more requests
	// after the first of a batch: 200 µs, small next to a batch's run time.
	DefaultGPUBatchWait = 200 * time.Microsecond
	// DefaultGPUWorkspace caps the per-device workspace (score tile and
	// candidates) at 4 GiB; it is further capped by free memory after the
	// corpus upload less gpuHeadroom.
	DefaultGPUWorkspace = 4 << 30
	// gpuHeadroom is left free for cuBLAS's own workspace and the JIT: 512 MiB.
	gpuHeadroom = 512 << 20
	// gpuStageBytes is one pinned upload staging buffer (two are used).
	gpuStageBytes = 16 << 20
)

// ErrGPUClosed is returned by Search after Close.
var ErrGPUClosed = errors.New("ann: GPU index closed")

// GPUConfig configures OpenGPU and NewGPU. Zero fields take the documented
// defaults.
type GPUConfig struct {
	// Devices are the GPU ordinals the corpus is sharded over, in row
	// order. Default: every GPU the driver reports.
	Devices []int
	// WorkspaceBytes is the device memory per GPU for the score tile and
	// the candidates, besides the corpus (fp16, 2·Dim bytes per row).
	// Default: min(DefaultGPUWorkspace, free memory after the upload − 512 MiB).
	// The tile height follows from it (the whole share when it fits).
	WorkspaceBytes int64
	// MaxBatch is the most queries one pipeline run scores; larger
	// requests are split. Default DefaultGPUMaxBatch.
	MaxBatch int
	// BatchWait is how long the batcher waits for more requests once one
	// arrives; negative means do not wait (requests that arrive while a
	// batch runs still form the next batch). Default DefaultGPUBatchWait.
	BatchWait time.Duration
	// Logf receives the device choice, kernel image and tiling. Default: none.
	Logf func(format string, args ...any)
	// Path chooses the search pipeline: GPUPathAuto (default: the fused
	// threshold pipeline, by batch size), GPUPathFused, GPUPathTiled or
	// GPUPathSegments (gpu_scan.go). GPUFlat.SetPath changes it later.
	Path string

	// Int8 keeps an int8 shard's codes on the GPU (1 byte per value, half
	// of fp16's memory and of a scan's HBM traffic) and scores them with
	// the int8 kernels (kernels/scan.cu, rls_scan*_i8): score = Σ_j
	// q_j·offset_j + Σ_j fp16(q_j·scale_j)·code_j, fp32-accumulated, which
	// is ⟨q, x⟩ over the shard's int8 vectors x = offset + scale∘code up
	// to the fp16 rounding of q∘scale. Needs an int8 shard (OpenGPU,
	// NewGPU, or NewGPUStream of codes with an INT8 header) and
	// Dim % 16 == 0. Every batch runs the fused pipeline (Path
	// is ignored); k > 2,048 selects on the host from the kernel's
	// unfiltered output, span by span. Default false: int8 rows are
	// decoded and rounded to fp16 on the way up. The int8 kernels have run
	// on the CPU kernel emulator only so far (see kernels/doc.go).
	Int8 bool

	// Test hooks: refDevices > 0 simulates that many devices with the
	// plain-Go kernel references (gpu_ref.go); tileRows > 0 forces the
	// tile; scanCap > 0 forces the survivor capacity per query (to make
	// the threshold pipeline overflow).
	refDevices int
	tileRows   int
	scanCap    int
	// canaryRows > 0 replaces CanaryRefRows; fault makes the reference
	// devices faulty at global row faultRow (refOps.fault).
	canaryRows int
	fault      string
	faultRow   int
}

// Validate reports the first bad field.
func (c GPUConfig) Validate() error {
	switch {
	case c.WorkspaceBytes < 0:
		return fmt.Errorf("ann: GPUConfig.WorkspaceBytes %d is negative", c.WorkspaceBytes)
	case c.MaxBatch < 0 || c.MaxBatch > 65535:
		return fmt.Errorf("ann: GPUConfig.MaxBatch %d outside [0, 65535]", c.MaxBatch)
	case !validGPUPath(c.Path):
		return fmt.Errorf("ann: GPUConfig.Path %q is not auto, fused, tiled or segments", c.Path)
	}
	seen := map[int]bool{}
	for _, d := range c.Devices {
		if d < 0 || seen[d] {
			return fmt.Errorf("ann: GPUConfig.Devices has a negative or repeated ordinal %d", d)
		}
		seen[d] = true
	}
	return nil
}

func (c GPUConfig) withDefaults() GPUConfig {
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultGPUMaxBatch
	}
	if c.BatchWait == 0 {
		c.BatchWait = DefaultGPUBatchWait
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Path == "" {
		c.Path = GPUPathAuto
	}
	return c
}

// gpuDevice runs work on one device's owner.
type gpuDevice interface {
	name() string
	l2Bytes() int
	freeBytes() (int64, error)
	run(fn func(o gpuOps) error) error
	close() error
}

// GPUFlat is an exact inner-product index over a shard resident in GPU
// memory (fp16, or int8 codes under GPUConfig.Int8), sharded by rows over
// one or more GPUs. Results equal Flat.Search's up to fp16 rounding of the
// queries (of q∘scale over int8) and the accumulation order: descending
// score, ties by ascending row.
//
// GPUFlat is safe for concurrent use: concurrent Search calls are gathered
// by one batcher goroutine into batches of up to MaxBatch queries that run
// on every device at once, and the per-device results are merged on the host.
type GPUFlat struct {
	h     Header
	cfg   GPUConfig
	devs  []gpuDevice
	base  []int // first row of each device's share
	rows  []int
	plans []gpuPlan

	es        int                    // bytes per stored value: 2 (fp16) or 1 (int8)
	path      atomic.Pointer[string] // GPUConfig.Path, changed by SetPath
	overflows atomic.Int64           // queries answered again after an overflow

	reqs chan *gpuReq
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type gpuReq struct {
	ctx  context.Context
	q    []float32
	nq   int
	k    int
	resp chan gpuResp
}

type gpuResp struct {
	hits [][]rlsearch.Hit
	err  error
}

// RowSource yields the rows of a corpus in order, as blocks of whole rows
// of little-endian binary16 (fp16) values, or of int8 codes (one byte per
// value) for an index under GPUConfig.Int8: the first row's index, the
// bytes (which the source may overwrite on the next call), and io.EOF after
// the last block. NewGPUStream uploads from one.
type RowSource func() (row0 int, f16 []byte, err error)

// OpenGPU loads the shard at path into GPU memory by streaming it block by
// block through pinned staging buffers (host memory stays at one block plus
// 32 MiB, whatever the shard size; version-1 shards, which are not
// streamable, are read whole first). fp32 and int8 shards are rounded to
// fp16 on the way. Errors: one matching cuda.ErrNoDevice (errors.Is) when
// there is no driver or GPU, kernels.ErrUnsupportedDevice, shard errors
// (ErrCorrupt), out-of-memory as *cuda.Error. The caller must Close it.
func OpenGPU(path string, cfg GPUConfig) (*GPUFlat, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sr, err := OpenVectorFileReader(path)
	if err != nil {
		// Version 1 shards cannot be streamed: read them whole.
		f, err2 := ReadVectorFile(path)
		if err2 != nil {
			return nil, err
		}
		return NewGPU(f, cfg)
	}
	defer sr.Close()
	h := sr.Header()
	if cfg.Int8 {
		if err := int8Usable(h); err != nil {
			return nil, err
		}
		return newGPU(h, sr.NextRaw, cfg) // the codes as stored
	}
	var conv []byte
	next := func() (int, []byte, error) {
		if h.DType == FP16 {
			return sr.NextRaw()
		}
		row0, vecs, err := sr.Next()
		if err != nil {
			return row0, nil, err
		}
		conv = appendF16(conv[:0], vecs)
		return row0, conv, nil
	}
	return newGPU(h, next, cfg)
}

// NewGPUStream builds a GPU index of h.Count rows of h.Dim from next (the
// rows never need to be whole in host memory: generated corpora, network
// streams). Rows arrive as fp16 (h.DType is then ignored), or, under
// cfg.Int8, as int8 codes of an int8 shard: h.DType must be INT8 with
// h.Dim scales and offsets (value = Scale[j]·code + Offset[j]). See
// OpenGPU for errors; ErrCorrupt when next delivers other than h.Count
// rows in order.
func NewGPUStream(h Header, next RowSource, cfg GPUConfig) (*GPUFlat, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Int8 {
		if h.DType != INT8 {
			return nil, int8Usable(h) // names the dtype
		}
		if len(h.Scale) != h.Dim || len(h.Offset) != h.Dim {
			return nil, fmt.Errorf("%w: ann: NewGPUStream with GPUConfig.Int8: the header has %d scales and %d offsets, want one of each per dimension (%d)", rlsearch.ErrBadInput, len(h.Scale), len(h.Offset), h.Dim)
		}
		for j := range h.Scale {
			if s, o := float64(h.Scale[j]), float64(h.Offset[j]); math.IsNaN(s) || math.IsInf(s, 0) || math.IsNaN(o) || math.IsInf(o, 0) {
				return nil, fmt.Errorf("%w: ann: NewGPUStream with GPUConfig.Int8: dimension %d has scale %v and offset %v, want finite values", rlsearch.ErrBadInput, j, h.Scale[j], h.Offset[j])
			}
		}
		if err := int8Usable(h); err != nil {
			return nil, err
		}
	}
	return newGPU(h, next, cfg)
}

// int8Usable reports why a shard cannot stay int8 on the GPU.
func int8Usable(h Header) error {
	switch {
	case h.DType != INT8:
		return fmt.Errorf("%w: ann: GPUConfig.Int8 needs an int8 vector file, this one is %v", rlsearch.ErrBadInput, h.DType)
	case h.Dim%16 != 0:
		return fmt.Errorf("%w: ann: GPUConfig.Int8 needs a dimension that is a multiple of 16 (the int8 kernels read 16 codes at a time), this vector file has %d", rlsearch.ErrBadInput, h.Dim)
	case len(h.Scale) != h.Dim || len(h.Offset) != h.Dim:
		return fmt.Errorf("%w: int8 vector file has %d scales and %d offsets for dim %d", ErrCorrupt, len(h.Scale), len(h.Offset), h.Dim)
	}
	return nil
}

// NewGPU uploads an in-memory Flat to the GPUs 65,536 rows at a time: fp16
// storage as is, fp32 and int8 rounded to fp16. See OpenGPU for errors.
func NewGPU(f *Flat, cfg GPUConfig) (*GPUFlat, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := f.Header()
	if cfg.Int8 {
		if err := int8Usable(h); err != nil {
			return nil, err
		}
	}
	const step = 1 << 16
	lo := 0
	var buf []byte
	next := func() (int, []byte, error) {
		if lo >= h.Count {
			return lo, nil, io.EOF
		}
		hi := min(lo+step, h.Count)
		if cfg.Int8 {
			buf = buf[:0]
			for _, c := range f.i8[lo*h.Dim : hi*h.Dim] {
				buf = append(buf, byte(c))
			}
		} else if h.DType == FP16 && f.f16 != nil {
			// fp16 storage goes as is (no widening and rounding back).
			buf = buf[:0]
			for _, b := range f.f16[lo*h.Dim : hi*h.Dim] {
				buf = binary.LittleEndian.AppendUint16(buf, b)
			}
		} else {
			buf = appendF16(buf[:0], f.Vectors(lo, hi))
		}
		row0 := lo
		lo = hi
		return row0, buf, nil
	}
	return newGPU(h, next, cfg)
}

func appendF16(dst []byte, v []float32) []byte {
	h := make([]uint16, len(v))
	kernels.F32ToF16Ref(h, v)
	for _, b := range h {
		dst = binary.LittleEndian.AppendUint16(dst, b)
	}
	return dst
}

func newGPU(h Header, next RowSource, cfg GPUConfig) (*GPUFlat, error) {
	cfg = cfg.withDefaults()
	g := &GPUFlat{h: Header{DType: FP16, Count: h.Count, Dim: h.Dim, Normalized: h.Normalized, EncoderID: h.EncoderID, ConfigHash: h.ConfigHash}, cfg: cfg, es: 2}
	if h.Dim <= 0 {
		return nil, fmt.Errorf("%w: dim %d", ErrDim, h.Dim)
	}
	var i8 *int8Quant
	if cfg.Int8 {
		i8 = &int8Quant{scale: h.Scale, offset: h.Offset}
		g.h.DType, g.h.Scale, g.h.Offset, g.es = INT8, h.Scale, h.Offset, 1
	}
	ndev := cfg.refDevices
	var ordinals []int
	if ndev == 0 {
		ordinals = cfg.Devices
		if ordinals == nil {
			infos, err := cuda.Devices()
			if err != nil {
				return nil, fmt.Errorf("ann: GPU index: %w", err)
			}
			for _, in := range infos {
				ordinals = append(ordinals, in.Ordinal)
			}
		}
		ndev = len(ordinals)
		if ndev == 0 {
			return nil, fmt.Errorf("ann: GPU index: %w", cuda.ErrNoDevice)
		}
	}
	// Contiguous row shares, as equal as possible; a device gets no share
	// (and is not used) when there are fewer rows than devices.
	ndev = max(1, min(ndev, h.Count))
	for d := 0; d < ndev; d++ {
		lo, hi := h.Count*d/ndev, h.Count*(d+1)/ndev
		g.base = append(g.base, lo)
		g.rows = append(g.rows, hi-lo)
	}
	ok := false
	defer func() {
		if !ok {
			for _, d := range g.devs {
				d.close()
			}
		}
	}()
	for d := 0; d < ndev; d++ {
		var dev gpuDevice
		var err error
		if cfg.refDevices > 0 {
			ops := newRefOps(h.Dim, g.rows[d], i8)
			ops.fault, ops.faultRow = cfg.fault, cfg.faultRow-g.base[d]
			dev = &refDevice{ops: ops, id: d}
		} else {
			dev, err = openCUDADevice(ordinals[d], h.Dim, g.rows[d], i8, cfg.Logf)
		}
		if err != nil {
			return nil, err
		}
		g.devs = append(g.devs, dev)
	}
	if err := g.upload(next); err != nil {
		return nil, err
	}
	for d, dev := range g.devs {
		budget := cfg.WorkspaceBytes
		if budget == 0 {
			free, err := dev.freeBytes()
			if err != nil {
				return nil, err
			}
			budget = min(int64(DefaultGPUWorkspace), free-gpuHeadroom)
		}
		p, err := planFor(h.Dim, g.rows[d], cfg.MaxBatch, budget, cfg.tileRows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dev.name(), err)
		}
		p.l2Bytes = dev.l2Bytes()
		if cfg.scanCap > 0 {
			p.scanEntries = cfg.scanCap * cfg.MaxBatch
		}
		if err := dev.run(func(o gpuOps) error { return o.reserve(p) }); err != nil {
			return nil, fmt.Errorf("%s: workspace of %d bytes: %w", dev.name(), p.workspaceBytes(), err)
		}
		g.plans = append(g.plans, p)
		cfg.Logf("ann: GPU index share %d on %s: rows [%d, %d), tile %d rows, workspace %d MiB", d, dev.name(), g.base[d], g.base[d]+g.rows[d], p.tileRows, p.workspaceBytes()>>20)
	}
	path := cfg.Path
	g.path.Store(&path)
	cfg.Logf("ann: GPU index: %s", g.Paths())
	g.reqs = make(chan *gpuReq)
	g.stop = make(chan struct{})
	g.done = make(chan struct{})
	go g.batcher()
	ok = true
	return g, nil
}

// upload streams the row source into the device shares.
func (g *GPUFlat) upload(next RowSource) error {
	d := g.h.Dim
	seen := 0
	for {
		row0, raw, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		es := g.es
		n := len(raw) / (es * d)
		switch {
		case len(raw) != es*d*n:
			return fmt.Errorf("%w: GPU upload: the block at row %d has %d bytes, not whole rows of %d × %d-byte values", ErrCorrupt, row0, len(raw), d, es)
		case row0 != seen:
			return fmt.Errorf("%w: GPU upload: a block starts at row %d, expected row %d (blocks come in order)", ErrCorrupt, row0, seen)
		case seen+n > g.h.Count:
			return fmt.Errorf("%w: GPU upload: the block at row %d has %d rows, past the header's %d", ErrCorrupt, row0, n, g.h.Count)
		}
		for dev := range g.devs {
			lo := max(row0, g.base[dev])
			hi := min(row0+n, g.base[dev]+g.rows[dev])
			if lo >= hi {
				continue
			}
			part := raw[es*d*(lo-row0) : es*d*(hi-row0)]
			if err := g.devs[dev].run(func(o gpuOps) error { return o.upload(lo-g.base[dev], part) }); err != nil {
				return fmt.Errorf("ann: GPU upload rows [%d, %d) to %s: %w", lo, hi, g.devs[dev].name(), err)
			}
		}
		seen += n
	}
	if seen != g.h.Count {
		return fmt.Errorf("%w: vector file delivered %d rows, header says %d", ErrCorrupt, seen, g.h.Count)
	}
	for _, dev := range g.devs {
		if err := dev.run(func(o gpuOps) error { return o.uploadDone() }); err != nil {
			return err
		}
	}
	return nil
}

// Header returns the shard header as stored on the GPU (DType FP16, or
// INT8 with the shard's scale and offset under GPUConfig.Int8).
func (g *GPUFlat) Header() Header { return g.h }

// Len is the number of vectors.
func (g *GPUFlat) Len() int { return g.h.Count }

// Dim is the vector dimension.
func (g *GPUFlat) Dim() int { return g.h.Dim }

// Devices names the devices holding the shares, in row order.
func (g *GPUFlat) Devices() []string {
	var out []string
	for _, d := range g.devs {
		out = append(out, d.name())
	}
	return out
}

// SetPath changes the search pipeline for later batches (GPUPathAuto,
// GPUPathFused, GPUPathTiled, GPUPathSegments; see GPUConfig.Path): every
// path returns the same results, so this is for tuning and benchmarks.
// Safe for concurrent use. Errors: rlsearch.ErrBadInput for an unknown
// path.
func (g *GPUFlat) SetPath(path string) error {
	if !validGPUPath(path) {
		return fmt.Errorf("%w: ann: GPU path %q is not auto, fused, tiled or segments", rlsearch.ErrBadInput, path)
	}
	if path == "" {
		path = GPUPathAuto
	}
	g.path.Store(&path)
	return nil
}

// Paths says which pipeline each batch size runs on (for logs and
// /healthz), e.g. "path auto: batch 1–16 fused rls_scan16, batch 17–64
// fused rls_scan64, batch 65–512 fused rls_scan128; k > 2048 host
// selection".
func (g *GPUFlat) Paths() string {
	return describePaths(*g.path.Load(), g.h.Dim, g.cfg.MaxBatch, g.cfg.Int8)
}

// Overflows is how many queries the threshold pipeline answered again with
// the segment pipeline because their survivors overflowed (see
// gpu_scan.go); it stays 0 unless the corpus order is adversarial.
func (g *GPUFlat) Overflows() int64 { return g.overflows.Load() }

// Search returns, for each query, the k rows with the largest inner
// product, sorted by descending score, ties by ascending row — the same
// contract as Flat.Search. q is row-major [nq, Dim()] float32, converted to
// fp16 on the GPU (over int8 codes: packed on the host, see GPUConfig.Int8);
// scores are the fp32-accumulated products of the fp16 values. k is capped at Len(); k == 0 gives empty lists; k ≤ 2,048
// (kernels.KMax) selects on the GPU, larger k copies score tiles to the
// host. The returned slices are the caller's. Safe for concurrent use;
// requests are batched (GPUConfig.MaxBatch, BatchWait). Errors: ErrDim,
// rlsearch.ErrBadInput for k < 0, ctx.Err(), ErrGPUClosed, device errors.
func (g *GPUFlat) Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error) {
	d := g.h.Dim
	if len(q)%d != 0 {
		return nil, fmt.Errorf("%w: query length %d is not a multiple of dim %d", ErrDim, len(q), d)
	}
	if k < 0 {
		return nil, fmt.Errorf("%w: ann: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
	}
	nq := len(q) / d
	k = min(k, g.h.Count)
	out := make([][]rlsearch.Hit, 0, nq)
	if k == 0 {
		for range nq {
			out = append(out, []rlsearch.Hit{})
		}
		return out, nil
	}
	for lo := 0; lo < nq; lo += g.cfg.MaxBatch {
		hi := min(lo+g.cfg.MaxBatch, nq)
		r := &gpuReq{ctx: ctx, q: q[lo*d : hi*d], nq: hi - lo, k: k, resp: make(chan gpuResp, 1)}
		select {
		case g.reqs <- r:
		case <-g.stop:
			return nil, ErrGPUClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case res := <-r.resp:
			if res.err != nil {
				return nil, res.err
			}
			out = append(out, res.hits...)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// batcher is the owner of batching: it gathers requests into batches
// (internal/batch: up to MaxBatch queries, BatchWait after a batch opens; a
// request with k > kernels.KMax runs alone) and runs them; the devices'
// owner goroutines do the GPU work.
func (g *GPUFlat) batcher() {
	defer close(g.done)
	batch.New(g.reqs, batch.Config[*gpuReq]{
		Max:   g.cfg.MaxBatch,
		Wait:  g.cfg.BatchWait,
		Size:  func(r *gpuReq) int { return r.nq },
		Alone: func(r *gpuReq) bool { return r.k > kernels.KMax },
		Stop:  g.stop,
	}).Run(g.runBatch)
}

// runBatch answers the requests of one batch (all k ≤ KMax, or a single
// request) with one pipeline run per device.
func (g *GPUFlat) runBatch(batch []*gpuReq) {
	live := batch[:0:0]
	k, nq := 0, 0
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.resp <- gpuResp{err: err}
			continue
		}
		live = append(live, r)
		k = max(k, r.k)
		nq += r.nq
	}
	if len(live) == 0 {
		return
	}
	q := live[0].q
	if len(live) > 1 {
		q = make([]float32, 0, nq*g.h.Dim)
		for _, r := range live {
			q = append(q, r.q...)
		}
	}
	hits, err := g.searchDevices(q, nq, k)
	off := 0
	for _, r := range live {
		if err != nil {
			r.resp <- gpuResp{err: err}
			continue
		}
		res := hits[off : off+r.nq]
		off += r.nq
		for i := range res {
			res[i] = res[i][:min(r.k, len(res[i]))]
		}
		r.resp <- gpuResp{hits: res}
	}
}

// searchDevices runs the pipeline on every device at once and merges.
func (g *GPUFlat) searchDevices(q []float32, nq, k int) ([][]rlsearch.Hit, error) {
	parts := make([][][]rlsearch.Hit, len(g.devs))
	errs := make([]error, len(g.devs))
	path := *g.path.Load()
	var wg sync.WaitGroup
	for d, dev := range g.devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kd := min(k, g.rows[d])
			errs[d] = dev.run(func(o gpuOps) error {
				var err error
				var redone int
				parts[d], redone, err = runPipeline(o, g.plans[d], q, nq, kd, choosePath(path, g.h.Dim, nq, kd, g.cfg.Int8))
				g.overflows.Add(int64(redone))
				return err
			})
			if errs[d] != nil {
				errs[d] = fmt.Errorf("ann: GPU search on %s: %w", dev.name(), errs[d])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return mergeDeviceParts(parts, g.base, nq, k), nil
}

// Close stops the batcher (pending and later Search calls get
// ErrGPUClosed) and frees the device memory. Idempotent.
func (g *GPUFlat) Close() error {
	var err error
	g.once.Do(func() {
		close(g.stop)
		<-g.done
		for _, d := range g.devs {
			err = errors.Join(err, d.close())
		}
	})
	return err
}

// int8Quant is an int8 shard's per-dimension decoding x = offset +
// scale·code (GPUConfig.Int8).
type int8Quant struct{ scale, offset []float32 }

// refDevice is a simulated device for tests (see refOps).
type refDevice struct {
	mu  sync.Mutex
	ops *refOps
	id  int
}

func (d *refDevice) name() string              { return fmt.Sprintf("ref%d", d.id) }
func (d *refDevice) l2Bytes() int              { return 60 << 20 }
func (d *refDevice) freeBytes() (int64, error) { return 1 << 30, nil }
func (d *refDevice) close() error              { return d.ops.close() }
func (d *refDevice) run(fn func(o gpuOps) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fn(d.ops)
}
