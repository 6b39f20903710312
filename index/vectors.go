package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	counter "github.com/rlsearch/rlsearch/internal/progress"
)

// normTolerance is how far from 1 an imported vector's L2 norm may be and
// still count as normalised: float16 storage of a unit vector is off by
// up to ~1e-3 (2⁻¹¹ relative per value), float32 by ~1e-6.
const normTolerance = 1e-2

// importChunkRows is the rows read per chunk while importing: 4096 rows of
// 768-d float32 are 12 MiB, the import's working memory besides one shard
// block.
const importChunkRows = 4096

// ErrVectors is wrapped by errors about an imported vector file that does
// not fit the corpus or the model.
var ErrVectors = errors.New("index: vector file does not fit")

// openVectors opens cfg.Vectors and checks what can be checked before the
// corpus is read: the dimension against the model, the encoder name.
func openVectors(cfg BuildConfig) (*vecfile.Reader, error) {
	if cfg.VectorsEncoder == "" && cfg.Encoder == nil {
		return nil, fmt.Errorf("index: BuildConfig.VectorsEncoder (--vectors-encoder) is required without a model (--model): name the model that made %s (e.g. intfloat/e5-base-v2), it is recorded in the shard and queries must be encoded with it", cfg.Vectors)
	}
	r, err := vecfile.Open(cfg.Vectors)
	if err != nil {
		return nil, err
	}
	in := r.Info()
	if cfg.Encoder != nil && cfg.Encoder.Dim() != in.Dim {
		r.Close()
		return nil, fmt.Errorf("%w: %s holds %d-d vectors but model %s embeds %d dimensions", ErrVectors, cfg.Vectors, in.Dim, cfg.Encoder.Name(), cfg.Encoder.Dim())
	}
	return r, nil
}

// vectorDest is where importVectors writes the rows [lo, hi) of the file.
type vectorDest struct {
	lo, hi int
	path   string
}

// importVectors streams the rows of r into vector files, rows [lo, hi) of
// the file into dests[i].path (dests in row order, disjoint: the whole
// file, or the rows of the shards being built), after checking that there
// is one row per passage (n indexed, skipped empty passages left out).
// Memory: one chunk of importChunkRows rows plus one shard block per
// destination, whatever the file size. INT8 reads the file twice: a first
// pass fits the per-dimension scales (ann.Int8Range) over every row, so
// that shards quantise exactly as one index would.
func importVectors(ctx context.Context, cfg BuildConfig, r *vecfile.Reader, n, skipped int, dests []vectorDest, out io.Writer) (*DenseMeta, error) {
	in := r.Info()
	if in.Count != n {
		hint := ""
		if skipped > 0 && in.Count == n+skipped {
			hint = fmt.Sprintf("; the file counts the %d empty passages the index skips, so its rows cannot be matched to passages", skipped)
		}
		return nil, fmt.Errorf("%w: %s holds %d vectors but the corpus %s has %d passages%s", ErrVectors, cfg.Vectors, in.Count, cfg.Corpus, n, hint)
	}
	dt := cfg.DType
	if dt == 0 {
		dt = ann.FP16
	}
	name := cfg.VectorsEncoder
	var hash uint64
	if cfg.Encoder != nil {
		if name == "" {
			name = cfg.Encoder.Name()
		}
		hash = cfg.ConfigHash
	}
	h := ann.Header{DType: dt, Dim: in.Dim, Normalized: !cfg.VectorsUnnormalized, EncoderID: name, ConfigHash: hash}
	buf := make([]float32, importChunkRows*in.Dim)
	if dt == ann.INT8 {
		rg := ann.NewInt8Range(in.Dim)
		err := streamRows(ctx, cfg, r, buf, "int8 ranges (pass 1 of 2)", out, func(rows []float32, first int) error {
			rg.Add(rows)
			return nil
		})
		if err != nil {
			return nil, err
		}
		h.Scale, h.Offset = rg.Fit()
		r.Rewind()
	}
	ws := make([]*ann.VectorFileWriter, len(dests))
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.Abort()
			}
		}
	}()
	for i, d := range dests {
		w, err := ann.CreateVectorFile(d.path, h)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	label := "importing vectors"
	if dt == ann.INT8 {
		label = "importing vectors (pass 2 of 2)"
	}
	d := in.Dim
	err := streamRows(ctx, cfg, r, buf, label, out, func(rows []float32, first int) error {
		last := first + len(rows)/d
		for i, dst := range dests {
			lo, hi := max(first, dst.lo), min(last, dst.hi)
			if lo >= hi {
				continue
			}
			if err := ws[i].Append(rows[(lo-first)*d : (hi-first)*d]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range ws {
		w := ws[i]
		ws[i] = nil
		if err := w.Close(); err != nil {
			return nil, err
		}
	}
	meta := &DenseMeta{Model: name, Dim: in.Dim, DType: dt.String(), ConfigHash: hash, ImportedFrom: cfg.Vectors}
	if g := r.Graph(); g != nil {
		switch {
		case len(dests) == 1 && dests[0].lo == 0 && dests[0].hi == in.Count:
			if meta.ImportedGraph, err = importGraph(ctx, cfg, r, g, filepath.Join(filepath.Dir(dests[0].path), HNSWFile), out); err != nil {
				return nil, err
			}
		case out != nil:
			// A graph over every row does not split into the shards'
			// graphs (its edges cross them).
			fmt.Fprintf(out, "indexing: not importing the HNSW graph of %s into shards (a graph of all rows does not split); --dense-backend hnsw builds each shard's own\n", cfg.Vectors)
		}
	}
	return meta, nil
}

// importGraph writes the HNSW graph of a faiss IndexHNSW file as the
// index's graph (ann.SaveImportedHNSW), after its rows were imported (and
// their norms checked: an L2 graph ranks unit vectors as inner product
// does). A graph whose level capacities are not faiss's default layout is
// not imported (the hnsw backend then builds its own) and out says why.
// It returns the graph's description for meta.json ("" when skipped).
func importGraph(ctx context.Context, cfg BuildConfig, r *vecfile.Reader, g *vecfile.Graph, path string, out io.Writer) (string, error) {
	in := r.Info()
	ig, err := ann.FaissGraph(g, in.Dim)
	if err != nil {
		if errors.Is(err, vecfile.ErrFormat) {
			return "", fmt.Errorf("%s: %w", cfg.Vectors, err)
		}
		if out != nil {
			fmt.Fprintf(out, "indexing: not importing the HNSW graph of %s: %v; --dense-backend hnsw builds its own\n", cfg.Vectors, err)
		}
		return "", nil
	}
	p := counter.New(out, "indexing: importing the faiss HNSW graph", "nodes", ig.N)
	defer p.Finish()
	ig.Progress = func(done, _ int) { p.Set(done) }
	if err := ann.SaveImportedHNSW(ctx, path, ig); err != nil {
		return "", fmt.Errorf("%s: %w", cfg.Vectors, err)
	}
	return fmt.Sprintf("%s, efSearch %d", in.Desc, ig.EfSearch), nil
}

// streamRows reads every row of r in chunks, checks norms (unless
// cfg.VectorsUnnormalized allows any norm for an inner-product file) and
// calls fn with each chunk and its first row, reporting progress with ETA.
func streamRows(ctx context.Context, cfg BuildConfig, r *vecfile.Reader, buf []float32, label string, out io.Writer, fn func(rows []float32, first int) error) error {
	in := r.Info()
	p := counter.New(out, "indexing: "+label, "vectors", in.Count)
	defer p.Finish()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		first := r.Row()
		k, err := r.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Vectors, err)
		}
		rows := buf[:k*in.Dim]
		if err := checkNorms(cfg, in, rows, first); err != nil {
			return err
		}
		if err := fn(rows, first); err != nil {
			return err
		}
		p.Set(first + k)
	}
}

func checkNorms(cfg BuildConfig, in vecfile.Info, rows []float32, first int) error {
	d := in.Dim
	for i := 0; i+d <= len(rows); i += d {
		var s float64
		for _, v := range rows[i : i+d] {
			s += float64(v) * float64(v)
		}
		norm := math.Sqrt(s)
		row := first + i/d
		if math.IsNaN(norm) || math.IsInf(norm, 0) {
			// Even with --vectors-unnormalized: a NaN or infinite value
			// scores NaN against every query.
			return fmt.Errorf("%w: %s: row %d holds a NaN or infinite value (L2 norm %v)", ErrVectors, cfg.Vectors, row, norm)
		}
		if math.Abs(norm-1) <= normTolerance || (cfg.VectorsUnnormalized && in.Metric != vecfile.L2) {
			continue
		}
		if in.Metric == vecfile.L2 {
			return fmt.Errorf("%w: %s: row %d has L2 norm %.4g, not 1 ± %g: ranking by L2 distance equals ranking by inner product only for L2-normalised vectors, and this index serves inner product; normalise them (faiss.normalize_L2) and save again", ErrVectors, cfg.Vectors, row, norm, normTolerance)
		}
		return fmt.Errorf("%w: %s: row %d has L2 norm %.4g, not 1 ± %g (E5 vectors are L2-normalised); pass --vectors-unnormalized to serve inner product on the vectors as they are", ErrVectors, cfg.Vectors, row, norm, normTolerance)
	}
	return nil
}
