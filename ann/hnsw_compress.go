package ann

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rlsearch/rlsearch"
)

// Compress makes h a compressed graph (RerankOn) whose exact re-rank store
// is the fp16 rows file at path, and drops h's float32 vectors (or its
// shard, after ShareVectors): resident memory becomes the int8 codes
// (Dim bytes per vector + 8·Dim) plus the graph; the rows stay in the page
// cache. Over an int8 shard the shard's codes are kept (shared, not
// copied). Without int8 codes h first fits them over its vectors in one
// streamed pass (the per-dimension range of FitInt8, so a graph built with
// HNSWConfig.Int8 over the same vectors has the same codes); the graph
// itself is unchanged (it is built on float32 either way).
//
// The rows file is written atomically (temp file, sync, rename) when path
// does not exist, and reused when it does and holds exactly h's vectors
// rounded to fp16: its header's shape and CRC-32C must equal those of h's
// vectors, and its rows must match that CRC (one read of the file). A file
// that does not is refused, never rewritten in place: ErrStaleRows when it
// is intact but holds other vectors (the shard was rebuilt), ErrCorrupt
// when it is damaged (truncated, bad header or rows); either error names
// the path and says to delete it. reused reports which case it was.
//
// After Compress, Add and Save return errors; Close unmaps the rows.
// Answers are a function of the graph, the vectors and the query only
// (Search's determinism holds: each query is searched and re-ranked on
// its own). Not safe concurrently with Search. Errors: the above, ErrBadInput
// when h is already compressed, I/O.
func (h *HNSW) Compress(path string) (reused bool, err error) {
	if h.rr != nil {
		return false, fmt.Errorf("ann: Compress %s: the graph is already compressed (re-rank rows %s)", path, h.rr.path)
	}
	if h.vecs == nil && h.src == nil && h.n > 0 {
		return false, errors.New("ann: Compress: the graph holds no vectors")
	}
	src := h.rowsSrc()
	if h.codes == nil {
		h.fitCodes(src)
	}
	want := fp16Sum(h.n, h.dim, src)
	r, reused, err := openOrWriteRows(path, h.n, h.dim, want, func() error { return writeFP16Rows(path, h.n, h.dim, src) })
	if err != nil {
		return false, err
	}
	if err := h.rerankOn(r, false); err != nil {
		r.Close()
		return false, err
	}
	h.ownRows = true
	return reused, nil
}

// TraverseInt8 makes h traverse its graph on int8 codes and re-rank the
// EfSearch candidates on its own rows, which it keeps: its float32 vectors,
// or the shard it shares (ShareVectors), so scores are those of exact
// search over them. Without codes it fits them over the rows first, in one
// streamed pass, as Compress does (the per-dimension range of FitInt8: the
// codes of a graph built with HNSWConfig.Int8 over the same vectors, so the
// same answers); a graph that has codes (HNSWConfig.Int8, an int8 shard) is
// left as it is. The graph is unchanged. Memory: Dim bytes per vector and
// 8·Dim more; a query reads 1 byte per value of the nodes it visits
// instead of 4 (or 2), plus EfSearch rows for the re-rank. Not safe
// concurrently with Search. Errors: rlsearch.ErrBadInput when h is
// compressed (it traverses on codes already) or holds no vectors.
func (h *HNSW) TraverseInt8() error {
	switch {
	case h.rr != nil:
		return fmt.Errorf("%w: ann: TraverseInt8: the graph is compressed (it traverses on int8 codes already)", rlsearch.ErrBadInput)
	case h.codes != nil:
		return nil
	case h.vecs == nil && h.src == nil && h.n > 0:
		return fmt.Errorf("%w: ann: TraverseInt8: the graph holds no vectors", rlsearch.ErrBadInput)
	}
	h.fitCodes(h.rowsSrc())
	return nil
}

// rowsSrc returns h's rows [lo, hi) as float32: a view of its vectors, or
// the shard's rows widened into dst.
func (h *HNSW) rowsSrc() func(dst []float32, lo, hi int) []float32 {
	return func(dst []float32, lo, hi int) []float32 {
		if h.vecs != nil {
			return h.vecs[lo*h.dim : hi*h.dim]
		}
		return h.src.widen(dst, lo, hi)
	}
}

// fitCodes fits int8 scales over h's vectors (rows from src, in chunks)
// and encodes them: the codes FitInt8 and encodeI8 give over the whole
// array, without a float32 copy of it.
func (h *HNSW) fitCodes(src func(dst []float32, lo, hi int) []float32) {
	step := rows16Chunk(h.dim)
	buf := make([]float32, step*h.dim)
	rg := NewInt8Range(h.dim)
	for lo := 0; lo < h.n; lo += step {
		rg.Add(src(buf, lo, min(lo+step, h.n)))
	}
	h.scale, h.offset = rg.Fit()
	h.codes = make([]int8, h.n*h.dim)
	for lo := 0; lo < h.n; lo += step {
		hi := min(lo+step, h.n)
		encodeI8(h.codes[lo*h.dim:hi*h.dim], src(buf, lo, hi), h.scale, h.offset)
	}
	h.cfg.Int8 = true
}

// Compressed reports whether h re-ranks on mapped fp16 rows (Compress or
// RerankOn): traversal on int8 codes, scores q·fp16(x).
func (h *HNSW) Compressed() bool { return h.rr != nil }

// RerankRows is the path of the fp16 rows file h re-ranks on, "" when h is
// not compressed.
func (h *HNSW) RerankRows() string {
	if h.rr == nil {
		return ""
	}
	return h.rr.path
}

// Close unmaps the fp16 rows that Compress mapped (a no-op otherwise);
// Search then returns an error. Not safe concurrently with Search.
func (h *HNSW) Close() error {
	if h.rr == nil || !h.ownRows {
		return nil
	}
	err := h.rr.Close()
	h.rr, h.closed = nil, true
	return err
}

// openOrWriteRows maps the fp16 rows file at path after checking that it
// holds n × dim rows whose CRC is want (reused), or, when there is none,
// writes it with write and maps it. The errors are Compress's.
func openOrWriteRows(path string, n, dim int, want uint32, write func() error) (r *FP16Rows, reused bool, err error) {
	switch _, serr := os.Stat(path); {
	case serr == nil:
		if r, err = OpenFP16Rows(path); err != nil {
			return nil, false, fmt.Errorf("%w (delete it to rewrite it from the vector file)", err)
		}
		switch {
		case r.Len() != n || r.Dim() != dim:
			err = fmt.Errorf("%w: %s holds %d × %d rows, the vector file %d × %d: delete it to rewrite it", ErrStaleRows, path, r.Len(), r.Dim(), n, dim)
		case r.sum != want:
			err = fmt.Errorf("%w: %s holds other vectors (rows checksum %08x, the vector file's %08x): delete it to rewrite it", ErrStaleRows, path, r.sum, want)
		default:
			err = r.Check()
		}
		if err != nil {
			r.Close()
			return nil, false, err
		}
		return r, true, nil
	case errors.Is(serr, fs.ErrNotExist):
		if err := write(); err != nil {
			return nil, false, err
		}
		if r, err = OpenFP16Rows(path); err != nil {
			return nil, false, err
		}
		if r.sum != want || r.Len() != n || r.Dim() != dim { // written from the same vectors: only a concurrent writer could differ
			r.Close()
			return nil, false, fmt.Errorf("%w: %s changed while it was written (rows checksum %08x, want %08x)", ErrCorrupt, path, r.sum, want)
		}
		return r, false, nil
	default:
		return nil, false, fmt.Errorf("ann: fp16 rows: %w", serr)
	}
}
