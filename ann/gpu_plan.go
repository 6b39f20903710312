package ann

import (
	"fmt"
	"slices"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/kernels"
)

// This file holds the device-independent half of the GPU index: how the
// corpus is tiled to fit a workspace, the dispatch of a batch to a
// pipeline (choosePath, gpu_scan.go: the threshold pipeline), and the
// segment pipeline
//
//	queries fp32 → fp16 (rls_f32_to_f16)
//	for each tile of T rows: S = D_tile · Qᵀ (cublasGemmEx, fp16 in, fp32 out)
//	                         per-segment top-k of S (rls_topk) → candidate slots 1..nSeg
//	                         merge running best (slot 0) + slots 1..nSeg → slot 0 (rls_topk)
//	compact slot 0 → out (rls_topk), copy out to the host
//
// written against gpuOps, which the CUDA backend (gpu_cuda.go) implements
// with cuBLAS and our kernels and the reference backend (gpu_ref.go) with
// the plain-Go kernel references, so that CPU tests run this exact code.

// gpuBuf names a workspace region.
type gpuBuf int

const (
	bufScores gpuBuf = iota // fp32 [maxBatch, tileRows] score tile (no rows)
	bufCand                 // fp32 scores + int32 rows, [maxBatch, candLd]
	bufOut                  // fp32 scores + int32 rows, [maxBatch, k]
)

// topkCall is one rls_topk launch over workspace regions; offsets and
// leading dimensions count elements. Rows are implicit (rowBase + index)
// for bufScores and read from the region otherwise.
type topkCall struct {
	src            gpuBuf
	srcOff, ldS    int
	len, segLen    int
	rowBase, k, nq int
	dst            gpuBuf
	dstOff, ldOut  int
}

// gpuOps is one device's share of the corpus plus its workspace. Methods are
// called from one goroutine at a time (the device owner).
type gpuOps interface {
	// upload writes rows [row0, row0+len(f16)/(2·dim)) of this device's share;
	// f16 is little-endian binary16, reused by the caller after the call.
	upload(row0 int, f16 []byte) error
	// uploadDone waits for pending uploads.
	uploadDone() error
	// reserve allocates the workspace for plan p (idempotent for the same p).
	reserve(p gpuPlan) error
	// putQueries converts q (row-major [nq, dim] fp32) to the fp16 query
	// block (over an int8 corpus: kernels.PackI8Queries' block and offsets).
	putQueries(q []float32, nq int) error
	// gemm fills bufScores[qi·rows + r] = ⟨Q_qi, D_{lo+r}⟩ for r < rows, qi < nq.
	gemm(lo, rows, nq int) error
	// topk runs one rls_topk launch.
	topk(c topkCall) error
	// readScores copies query qi's scores, bufScores[qi·rows : (qi+1)·rows], to dst.
	readScores(dst []float32, qi, rows int) error
	// readOut copies bufOut[0 : nq·k] to s and r.
	readOut(s []float32, r []int32, nq, k int) error

	// The threshold pipeline (gpu_scan.go, kernels/scan.cu). scanBegin
	// empties the best lists of nq queries for k (rls_scan_init); tiled
	// says the spans run through tileFilter on the second stream.
	scanBegin(nq, k int, tiled bool) error
	// scan runs rls_scan (kernels.ScanConfigs[cfg]) over rows [lo, hi).
	scan(cfg, lo, hi, nq, cap int) error
	// tileFilter scores rows [lo, lo+rows) into the next of two score
	// tiles of nq × ld (cuBLAS, stream 1) and filters them (rls_filter,
	// stream 2, after that GEMM; the GEMM into a tile waits for the filter
	// that last read it).
	tileFilter(lo, rows, ld, nq, cap int) error
	// merge runs rls_merge (after the scans or filters before it).
	merge(nq, k, cap int) error
	// readScan copies the best lists [nq·k] and the overflow flags [nq].
	readScan(nq, k int) ([]kernels.Pair, []int32, error)
	// readCand copies the survivor lists [nq·cap] and counts [nq].
	readCand(nq, cap int) ([]kernels.Pair, []int32, error)

	// close frees the device memory.
	close() error
}

// segLenFor is the rows per top-k block: enough blocks for one query to
// fill a GPU (T/4096 blocks per tile) while the candidates per tile stay
// about T/16 per query for large k. It is the smallest segment runPipeline
// uses (candidate space is sized for it).
func segLenFor(k int) int { return max(4096, 16*k) }

// topkBlocksTarget is about how many rls_topk blocks one tile should launch:
// several waves of an H100/H200 (132 SMs × 2 resident 1,024-thread blocks).
const topkBlocksTarget = 2048

// segLenRun is the segment length for a batch: segLenFor(k) for small
// batches, growing with the batch so that the launch stays near
// topkBlocksTarget blocks, up to 32,768 rows (128 KiB of scores per block,
// so the ~264 resident blocks' segments, ≈ 34 MB, stay in the 50 MB L2 for
// the radix passes after the first).
func segLenRun(k, nq, tileRows int) int {
	base := segLenFor(k)
	want := tileRows * nq / topkBlocksTarget
	return max(base, min(want, max(base, 32768)))
}

// candPerQuery is the candidate slots per query for k over tiles of T rows:
// the running best (k) plus k per segment.
func candPerQuery(k, tileRows int) int {
	nSeg := (tileRows + segLenFor(k) - 1) / segLenFor(k)
	return (1 + nSeg) * k
}

// maxCandPerQuery is candPerQuery's maximum over k = 1..KMax (it is not
// monotone in k because of the ceiling).
func maxCandPerQuery(tileRows int) int {
	m := 0
	for k := 1; k <= kernels.KMax; k++ {
		m = max(m, candPerQuery(k, tileRows))
	}
	return m
}

// gpuPlan is the workspace shape of one device.
type gpuPlan struct {
	dim, rows   int // this device's share
	maxBatch    int // queries per pipeline run
	tileRows    int // T: rows per GEMM tile
	candLd      int // candidate slots per query (the most any k ≤ KMax needs)
	qRows       int // fp16 query rows (maxBatch rounded up to rls_scan's query blocks)
	scanEntries int // survivor pairs of the threshold pipeline, all queries
	l2Bytes     int // the device's L2 (sizes the tiled path's tiles)
}

// scoreFloats is the score buffer: one tile for the segment pipeline, or
// the tiled path's two (at least 1,024 rows each for a full batch).
func (p gpuPlan) scoreFloats() int {
	return max(p.maxBatch*p.tileRows, 2*p.maxBatch*min(max(p.rows, 1), 1024))
}

// workspaceBytes is the device memory p needs besides the corpus.
func (p gpuPlan) workspaceBytes() int64 {
	b := int64(p.maxBatch)
	return b*int64(p.dim)*4 + int64(p.qRows)*int64(p.dim)*2 + // queries fp32 + fp16
		int64(p.scoreFloats())*4 + // score tile(s)
		b*int64(p.candLd)*8 + // candidates (score + row)
		b*int64(kernels.KMax)*8 + // out
		b*int64(kernels.KMax)*kernels.PairBytes + b*12 + // best lists, θ, counts, flags
		int64(p.scanEntries)*kernels.PairBytes // survivors
}

// planFor picks the largest tile (a multiple of 1,024 rows, or the whole
// share) whose workspace fits budget bytes; forceTile > 0 overrides it.
func planFor(dim, rows, maxBatch int, budget int64, forceTile int) (gpuPlan, error) {
	p := gpuPlan{dim: dim, rows: rows, maxBatch: maxBatch, l2Bytes: 60 << 20,
		qRows: kernels.QueryRows(kernels.ScanFor(maxBatch, false), maxBatch), scanEntries: maxBatch * scanSlotsPerQuery}
	fit := func(t int) bool {
		p.tileRows = t
		p.candLd = maxCandPerQuery(t)
		return p.workspaceBytes() <= budget
	}
	if forceTile > 0 {
		fit(min(forceTile, max(rows, 1)))
		return p, nil
	}
	t := max(rows, 1)
	if !fit(t) {
		t = (t + 1023) / 1024 * 1024
		for t > 1024 && !fit(t) {
			t = max(1024, (t/2+1023)/1024*1024)
		}
		if !fit(t) {
			return p, fmt.Errorf("ann: GPUConfig.WorkspaceBytes %d too small: a 1,024-row tile at batch %d needs %d", budget, maxBatch, p.workspaceBytes())
		}
	}
	return p, nil
}

// runPipeline answers nq ≤ p.maxBatch queries with the k best rows of this
// device's share (local rows, sorted by score desc then row asc; fewer than
// k only when some scores are NaN) by the pipeline c, and how many queries
// the threshold pipeline answered again after an overflow. k ≥ 1 and
// k ≤ p.rows.
func runPipeline(o gpuOps, p gpuPlan, q []float32, nq, k int, c gpuChoice) ([][]rlsearch.Hit, int, error) {
	if err := o.putQueries(q, nq); err != nil {
		return nil, 0, err
	}
	switch c.path {
	case "host":
		if c.int8 {
			hits, err := hostSelectScan(o, p, nq, k)
			return hits, 0, err
		}
		hits, err := hostSelect(o, p, nq, k)
		return hits, 0, err
	case GPUPathFused, GPUPathTiled:
		return runScan(o, p, q, nq, k, c)
	}
	hits, err := runSegments(o, p, nq, k)
	return hits, 0, err
}

// runSegments is the segment pipeline over the fp16 queries on the device.
func runSegments(o gpuOps, p gpuPlan, nq, k int) ([][]rlsearch.Hit, error) {
	segLen := segLenRun(k, nq, p.tileRows)
	for t, lo := 0, 0; lo < p.rows; t, lo = t+1, lo+p.tileRows {
		rows := min(p.tileRows, p.rows-lo)
		if err := o.gemm(lo, rows, nq); err != nil {
			return nil, err
		}
		nSeg := (rows + segLen - 1) / segLen
		if err := o.topk(topkCall{src: bufScores, ldS: rows, len: rows, segLen: segLen, rowBase: lo, k: k, nq: nq,
			dst: bufCand, dstOff: k, ldOut: p.candLd}); err != nil {
			return nil, err
		}
		// Merge the running best (slot 0; skipped on the first tile) with
		// this tile's segments into slot 0. Equal scores appear in
		// ascending row order, as rls_topk requires.
		off, n := 0, (1+nSeg)*k
		if t == 0 {
			off, n = k, nSeg*k
		}
		if err := o.topk(topkCall{src: bufCand, srcOff: off, ldS: p.candLd, len: n, segLen: n, k: k, nq: nq,
			dst: bufCand, ldOut: p.candLd}); err != nil {
			return nil, err
		}
	}
	if err := o.topk(topkCall{src: bufCand, ldS: p.candLd, len: k, segLen: k, k: k, nq: nq, dst: bufOut, ldOut: k}); err != nil {
		return nil, err
	}
	s := make([]float32, nq*k)
	r := make([]int32, nq*k)
	if err := o.readOut(s, r, nq, k); err != nil {
		return nil, err
	}
	out := make([][]rlsearch.Hit, nq)
	for qi := range out {
		hits := make([]rlsearch.Hit, 0, k)
		for i := qi * k; i < (qi+1)*k && r[i] >= 0; i++ {
			hits = append(hits, rlsearch.Hit{Row: r[i], Score: s[i]})
		}
		out[qi] = hits
	}
	return out, nil
}

// hostSelect is the path for k > kernels.KMax: each score tile is copied to
// the host one query row at a time (T·4 bytes of host memory) and selected
// there; per query at most 2k candidates are kept between prunes.
func hostSelect(o gpuOps, p gpuPlan, nq, k int) ([][]rlsearch.Hit, error) {
	sel := newHostTopK(nq, k)
	buf := make([]float32, min(p.tileRows, p.rows))
	for lo := 0; lo < p.rows; lo += p.tileRows {
		rows := min(p.tileRows, p.rows-lo)
		if err := o.gemm(lo, rows, nq); err != nil {
			return nil, err
		}
		for qi := 0; qi < nq; qi++ {
			if err := o.readScores(buf[:rows], qi, rows); err != nil {
				return nil, err
			}
			for r, s := range buf[:rows] {
				sel.add(qi, kernels.Key(s), int32(lo+r))
			}
		}
	}
	return sel.hits(), nil
}

// hostTopK keeps each query's best k (key, row) entries on the host: at
// most 2k between prunes; key 0 (NaN) never ranks.
type hostTopK struct {
	k    int
	best [][]kernels.Pair
}

func newHostTopK(nq, k int) *hostTopK { return &hostTopK{k: k, best: make([][]kernels.Pair, nq)} }

func (h *hostTopK) prune(qi int) {
	e := h.best[qi]
	slices.SortFunc(e, func(a, b kernels.Pair) int { return kernels.CompareKeyRow(a.Key, a.Row, b.Key, b.Row) })
	h.best[qi] = e[:min(h.k, len(e))]
}

func (h *hostTopK) add(qi int, key uint32, row int32) {
	if key == 0 {
		return
	}
	h.best[qi] = append(h.best[qi], kernels.Pair{Key: key, Row: row})
	if len(h.best[qi]) >= 2*h.k {
		h.prune(qi)
	}
}

func (h *hostTopK) hits() [][]rlsearch.Hit {
	out := make([][]rlsearch.Hit, len(h.best))
	for qi := range out {
		h.prune(qi)
		hits := make([]rlsearch.Hit, len(h.best[qi]))
		for i, x := range h.best[qi] {
			hits[i] = rlsearch.Hit{Row: x.Row, Score: kernels.Unkey(x.Key)}
		}
		out[qi] = hits
	}
	return out
}

// mergeDeviceParts merges per-device results (each sorted, rows local to the
// device) into global top-k lists; base[d] is device d's first row.
func mergeDeviceParts(parts [][][]rlsearch.Hit, base []int, nq, k int) [][]rlsearch.Hit {
	if len(parts) == 1 && base[0] == 0 {
		return parts[0]
	}
	out := make([][]rlsearch.Hit, nq)
	for qi := range out {
		var all []rlsearch.Hit
		for d := range parts {
			for _, h := range parts[d][qi] {
				all = append(all, rlsearch.Hit{Row: h.Row + int32(base[d]), Score: h.Score})
			}
		}
		slices.SortFunc(all, func(a, b rlsearch.Hit) int {
			return kernels.CompareKeyRow(kernels.Key(a.Score), a.Row, kernels.Key(b.Score), b.Row)
		})
		out[qi] = all[:min(k, len(all))]
	}
	return out
}
