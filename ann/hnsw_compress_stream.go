package ann

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// openCompressedStream is Open's compressed HNSW without the shard in
// memory: for Backend "hnsw" with HNSWCompressed, a saved graph at
// HNSWPath and a streamable shard at Path. The graph is loaded without
// vectors (loadHNSW noVecs); the int8 codes (the graph file's, an int8
// shard's own, else fitted over the shard: FitInt8's range) and the fp16
// rows (checked or written) come from streaming the shard block by block,
// one to three reads of it; Opened.Flat is exact flat search over the
// mapped rows. Peak memory is the graph, the codes and one shard block,
// not the shard: what lets a shard larger than memory be served
// compressed. The index, its answers and the rows file are those of the
// in-memory path (TestOpenCompressedStream).
func openCompressedStream(ctx context.Context, cfg Config, hdr Header) (*Opened, error) {
	h, err := loadHNSW(cfg.HNSWPath, nil, true)
	if err != nil {
		return nil, fmt.Errorf("ann: read %s: %w", cfg.HNSWPath, err)
	}
	if h.Len() != hdr.Count || h.Dim() != hdr.Dim {
		return nil, fmt.Errorf("ann: graph %s has %d × %d vectors, vector file %d × %d: delete it to rebuild", cfg.HNSWPath, h.Len(), h.Dim(), hdr.Count, hdr.Dim)
	}
	if cfg.HNSW.EfSearch > 0 {
		h.SetEfSearch(cfg.HNSW.EfSearch)
	}
	// each streams the shard once, calling fn for every block of rows
	// (widened to float32; raw is the storage form), then returns the id
	// table.
	each := func(fn func(raw []byte, vecs []float32) error) ([]int64, error) {
		sr, err := OpenVectorFileReader(cfg.Path)
		if err != nil {
			return nil, err
		}
		defer sr.Close()
		for {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			_, raw, err := sr.NextRaw()
			if errors.Is(err, io.EOF) {
				return sr.IDs(), nil
			}
			if err != nil {
				return nil, err
			}
			vecs := make([]float32, len(raw)/hdr.DType.size())
			decodeRaw(vecs, raw, hdr)
			if err := fn(raw, vecs); err != nil {
				return nil, err
			}
		}
	}
	if h.codes == nil {
		switch hdr.DType {
		case INT8: // the shard's codes, as ShareVectors uses them
			h.codes = make([]int8, 0, h.n*h.dim)
			if _, err := each(func(raw []byte, _ []float32) error {
				for _, c := range raw {
					h.codes = append(h.codes, int8(c))
				}
				return nil
			}); err != nil {
				return nil, err
			}
			h.scale, h.offset = hdr.Scale, hdr.Offset
		default:
			rg := NewInt8Range(h.dim)
			if _, err := each(func(_ []byte, v []float32) error { rg.Add(v); return nil }); err != nil {
				return nil, err
			}
			h.scale, h.offset = rg.Fit()
			h.codes = make([]int8, h.n*h.dim)
			off := 0
			if _, err := each(func(_ []byte, v []float32) error {
				encodeI8(h.codes[off:off+len(v)], v, h.scale, h.offset)
				off += len(v)
				return nil
			}); err != nil {
				return nil, err
			}
		}
		h.cfg.Int8 = true
	}
	path := cfg.FP16RowsPath
	if path == "" {
		path = cfg.Path + ".f16"
	}
	// One read: the rows' CRC, the id table, and the rows file when absent.
	var w *rowsWriter
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
		if w, err = createFP16Rows(path, h.dim); err != nil {
			return nil, err
		}
	}
	var (
		sum uint32
		u   []uint16
		b   []byte
	)
	ids, err := each(func(_ []byte, v []float32) error {
		if w != nil {
			return w.writeRows(v)
		}
		if cap(u) < len(v) {
			u, b = make([]uint16, len(v)), make([]byte, 2*len(v))
		}
		sum = crcUpdate(sum, encodeF16Bytes(b, u, v))
		return nil
	})
	if err != nil {
		if w != nil {
			w.abort()
		}
		return nil, err
	}
	if w != nil {
		sum = w.sum
	}
	r, reused, err := openOrWriteRows(path, h.n, h.dim, sum, func() error { return w.commit() })
	if err != nil {
		return nil, err
	}
	if err := h.rerankOn(r, false); err != nil {
		r.Close()
		return nil, err
	}
	h.ownRows = true
	how := "written"
	if reused {
		how = "reused"
	}
	o := &Opened{Index: h, Backend: BackendHNSW, Flat: r.flat(hdr, ids)}
	o.Canary.What = "search canary"
	o.Reason = fmt.Sprintf("configured: HNSW (M=%d, efSearch=%d, int8 traversal true, compressed: fp16 re-rank from %s (%s, memory-mapped); graph loaded without vectors, vector file streamed, never held in memory)", h.cfg.M, h.cfg.EfSearch, path, how)
	return o, nil
}
