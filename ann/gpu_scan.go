package ann

import (
	"fmt"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/kernels"
)

// This file holds the threshold pipeline of the GPU index (kernels/scan.cu)
// and the choice of pipeline per batch. Per query it keeps the best k
// rows so far and their k-th key θ; rows are scored span by span in
// ascending row order, a score whose key exceeds θ is kept as a survivor
// (nothing else leaves the chip), and after each span rls_merge folds the
// survivors into the best k and raises θ:
//
//	queries fp32 → fp16; rls_scan_init (θ = 0: every non-NaN score survives)
//	for each span [lo, hi) of rows:
//	    fused: rls_scan16/64/128, tensor-core scores + filter in one persistent kernel
//	    tiled: per L2-sized tile, cuBLAS scores (stream 1) → rls_filter (stream 2),
//	           the GEMM of the next tile overlapping the filter of this one
//	    rls_merge
//	copy the best lists and overflow flags to the host
//
// The first span is at most the survivor capacity (every score survives
// while θ = 0); later spans grow so that the expected survivors per query,
// k·span/rows-so-far for rows in random order with respect to the query,
// stay near a quarter of the capacity. A query whose survivors overflowed
// (adversarial order, masses of equal scores) is flagged and answered
// again by the segment pipeline (gpu_plan.go), so results are exact in
// every case.

// GPU search paths (GPUConfig.Path, GPUFlat.SetPath).
const (
	// GPUPathAuto: fused for every batch when the dimension is a multiple
	// of 8 (rls_scan16 up to 16 queries, rls_scan64 up to 64, rls_scan128
	// above), else tiled; k > kernels.KMax always selects on the host.
	GPUPathAuto = "auto"
	// GPUPathFused: rls_scan (tensor-core GEMM with the filter in its
	// epilogue) + rls_merge; needs Dim % 8 == 0 (else tiled).
	GPUPathFused = "fused"
	// GPUPathTiled: cuBLAS score tiles sized to stay in L2 + rls_filter on
	// a second stream + rls_merge.
	GPUPathTiled = "tiled"
	// GPUPathSegments: the first pipeline (cuBLAS tiles, rls_topk per
	// segment and merge; gpu_plan.go); also the fallback after an overflow.
	GPUPathSegments = "segments"
)

func validGPUPath(p string) bool {
	switch p {
	case "", GPUPathAuto, GPUPathFused, GPUPathTiled, GPUPathSegments:
		return true
	}
	return false
}

// Threshold-pipeline sizing.
const (
	// scanSlotsPerQuery is the survivor capacity per query of a full
	// batch (the buffer holds maxBatch × 16,384 pairs, 64 MiB at 512);
	// smaller batches get more slots each, up to scanMaxCap.
	scanSlotsPerQuery = 16384
	scanMaxCap        = 1 << 20
	// scanFirstSpan caps the first span (θ = 0, every score survives):
	// rls_merge then selects from ≤ 16,384 + k entries per query.
	scanFirstSpan = 16384
	// scanTargetSurvivors caps the expected survivors per query and span:
	// one rls_merge block reads them 5–9 times (radix passes), so a span
	// costs it tens of microseconds at most.
	scanTargetSurvivors = 16384
	// tiledL2Fraction of the L2 holds the tiled path's two score tiles
	// (the rest holds the corpus tile the GEMM streams and the queries):
	// 24 MiB of the H200's 60 MiB, 16 MiB of an A100's 40 MiB.
	tiledL2Fraction = 0.4
)

// gpuChoice is how one batch runs on a device.
type gpuChoice struct {
	path string // GPUPathFused, GPUPathTiled, GPUPathSegments or "host"
	scan int    // kernels.ScanConfigs index for GPUPathFused
	int8 bool   // an int8 corpus (GPUConfig.Int8): fused, or "host" from scan output
	safe bool   // spans of at most the survivor capacity: no overflow possible
}

func (c gpuChoice) String() string {
	switch c.path {
	case GPUPathFused:
		return "fused " + kernels.ScanConfigs[c.scan].Name
	case "host":
		return "host selection"
	}
	return c.path
}

// choosePath picks the pipeline for a batch of nq queries and k under
// the configured path; an int8 corpus always runs fused (cuBLAS has no
// int8 × fp16 GEMM for the other paths).
func choosePath(path string, dim, nq, k int, int8 bool) gpuChoice {
	if k > kernels.KMax {
		return gpuChoice{path: "host", int8: int8}
	}
	if int8 {
		return gpuChoice{path: GPUPathFused, scan: kernels.ScanFor(nq, true), int8: true}
	}
	switch path {
	case GPUPathSegments, GPUPathTiled:
		return gpuChoice{path: path}
	}
	if dim%8 != 0 {
		return gpuChoice{path: GPUPathTiled} // rls_scan reads rows in 16-byte chunks
	}
	return gpuChoice{path: GPUPathFused, scan: kernels.ScanFor(nq, false)}
}

// describePaths says which pipeline each batch size gets (for logs and
// /healthz).
func describePaths(path string, dim, maxBatch int, int8 bool) string {
	var parts []string
	lo := 1
	for lo <= maxBatch {
		c := choosePath(path, dim, lo, 1, int8)
		hi := lo
		for hi < maxBatch && choosePath(path, dim, hi+1, 1, int8) == c {
			hi++
		}
		parts = append(parts, fmt.Sprintf("batch %d–%d %s", lo, hi, c))
		lo = hi + 1
	}
	if int8 {
		return fmt.Sprintf("int8 corpus: %s; k > %d host selection from the int8 scan", strings.Join(parts, ", "), kernels.KMax)
	}
	return fmt.Sprintf("path %s: %s; k > %d host selection", orAuto(path), strings.Join(parts, ", "), kernels.KMax)
}

func orAuto(p string) string {
	if p == "" {
		return GPUPathAuto
	}
	return p
}

// scanCap is the survivor capacity per query for a batch of nq.
func (p gpuPlan) scanCap(nq int) int {
	return max(1, min(scanMaxCap, p.scanEntries/max(nq, 1)))
}

// tiledRows is the tiled path's tile height for nq queries: two tiles of
// nq × T fp32 scores in tiledL2Fraction of the L2, a multiple of 128 rows,
// at least 1,024, within the score buffer (gpuPlan.scoreFloats).
func (p gpuPlan) tiledRows(nq int) int {
	t := int(tiledL2Fraction*float64(p.l2Bytes)) / (2 * 4 * nq)
	t = max(1024, t/128*128)
	t = min(t, p.scoreFloats()/(2*nq))
	return max(1, min(t, p.rows))
}

// scanSpan is a row range of one scan + merge round.
type scanSpan struct{ lo, hi int }

// scanSpans splits rows [0, rows) for k and a survivor capacity of cap
// per query: the first span holds ≤ min(cap, scanFirstSpan) rows (θ is 0
// there); each later span is at most m·target/k rows after m rows, so that
// ≈ target = min(cap/4, scanTargetSurvivors) survivors are expected for
// rows in random order.
func scanSpans(rows, k, cap int) []scanSpan {
	if rows <= 0 {
		return nil
	}
	first := max(1, min(rows, cap, scanFirstSpan))
	spans := []scanSpan{{0, first}}
	target := max(1, min(cap/4, scanTargetSurvivors))
	growth := int64(max(1, target/max(k, 1)))
	for lo := first; lo < rows; {
		hi := int(min(int64(rows), int64(lo)+int64(lo)*growth))
		spans = append(spans, scanSpan{lo, hi})
		lo = hi
	}
	return spans
}

// capSpans splits rows [0, rows) into spans of at most cap rows: a query
// has at most cap survivors in each, so none overflows.
func capSpans(rows, cap int) []scanSpan {
	var spans []scanSpan
	for lo := 0; lo < rows; lo += cap {
		spans = append(spans, scanSpan{lo, min(rows, lo+cap)})
	}
	return spans
}

// hostSelectScan is hostSelect over an int8 corpus: per span of at most
// the survivor capacity, the scan with θ = 0 (no merge, so every non-NaN
// score survives, none dropped) and its survivors copied to the host.
func hostSelectScan(o gpuOps, p gpuPlan, nq, k int) ([][]rlsearch.Hit, error) {
	cp := p.scanCap(nq)
	sel := newHostTopK(nq, k)
	cfg := kernels.ScanFor(nq, true)
	for _, sp := range capSpans(p.rows, cp) {
		if err := o.scanBegin(nq, 1, false); err != nil {
			return nil, err
		}
		if err := o.scan(cfg, sp.lo, sp.hi, nq, cp); err != nil {
			return nil, err
		}
		cand, count, err := o.readCand(nq, cp)
		if err != nil {
			return nil, err
		}
		for qi := 0; qi < nq; qi++ {
			if int(count[qi]) > cp {
				return nil, fmt.Errorf("ann: int8 host selection: %d survivors in a span of %d rows", count[qi], sp.hi-sp.lo)
			}
			for _, e := range cand[qi*cp : qi*cp+int(count[qi])] {
				sel.add(qi, e.Key, e.Row)
			}
		}
	}
	return sel.hits(), nil
}

// runScan answers the batch whose fp16 queries are on the device with the
// threshold pipeline; queries whose survivors overflowed are answered
// again by the segment pipeline. k ≤ kernels.KMax, k ≤ p.rows.
func runScan(o gpuOps, p gpuPlan, q []float32, nq, k int, c gpuChoice) ([][]rlsearch.Hit, int, error) {
	cp := p.scanCap(nq)
	if err := o.scanBegin(nq, k, c.path == GPUPathTiled); err != nil {
		return nil, 0, err
	}
	tile := p.tiledRows(nq)
	spans := scanSpans(p.rows, k, cp)
	if c.safe {
		spans = capSpans(p.rows, cp)
	}
	for _, sp := range spans {
		if c.path == GPUPathFused {
			if err := o.scan(c.scan, sp.lo, sp.hi, nq, cp); err != nil {
				return nil, 0, err
			}
		} else {
			for lo := sp.lo; lo < sp.hi; lo += tile {
				if err := o.tileFilter(lo, min(tile, sp.hi-lo), tile, nq, cp); err != nil {
					return nil, 0, err
				}
			}
		}
		if err := o.merge(nq, k, cp); err != nil {
			return nil, 0, err
		}
	}
	best, flags, err := o.readScan(nq, k)
	if err != nil {
		return nil, 0, err
	}
	out := make([][]rlsearch.Hit, nq)
	var redo []int
	for qi := range out {
		if flags[qi] != 0 {
			redo = append(redo, qi)
			continue
		}
		hits := make([]rlsearch.Hit, 0, k)
		for _, e := range best[qi*k : (qi+1)*k] {
			if e.Row < 0 {
				break
			}
			hits = append(hits, rlsearch.Hit{Row: e.Row, Score: kernels.Unkey(e.Key)})
		}
		out[qi] = hits
	}
	if len(redo) == 0 {
		return out, 0, nil
	}
	// Overflow: answer those queries with the segment pipeline, or over an
	// int8 corpus (no GEMM for it) with the scan again over spans that
	// cannot overflow.
	d := p.dim
	sub := make([]float32, 0, len(redo)*d)
	for _, qi := range redo {
		sub = append(sub, q[qi*d:(qi+1)*d]...)
	}
	if err := o.putQueries(sub, len(redo)); err != nil {
		return nil, 0, err
	}
	var again [][]rlsearch.Hit
	if c.int8 {
		if c.safe {
			return nil, 0, fmt.Errorf("ann: int8 scan overflowed spans of its capacity (flags %v)", flags)
		}
		again, _, err = runScan(o, p, sub, len(redo), k, gpuChoice{path: GPUPathFused, scan: kernels.ScanFor(len(redo), true), int8: true, safe: true})
	} else {
		again, err = runSegments(o, p, len(redo), k)
	}
	if err != nil {
		return nil, 0, err
	}
	for i, qi := range redo {
		out[qi] = again[i]
	}
	return out, len(redo), nil
}
