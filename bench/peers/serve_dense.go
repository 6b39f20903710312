package peers

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/docstore"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/atomicfile"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// Routes of the serve suite (the /retrieve "retriever" field).
const (
	// RouteBM25 is the sparse route: ours' BM25, the peer's Xapian BM25.
	RouteBM25 = rlsearch.RetrieverBM25
	// RouteE5 is the dense route: ours encodes each query with the E5 model
	// (ONNX Runtime over model.onnx) and searches its vector file; the peer
	// encodes each request's queries with torch (e5_torch.py over the same
	// weights in model.safetensors) and searches faiss IndexFlatIP over the
	// same passage vectors.
	RouteE5 = rlsearch.RetrieverE5
)

// Files of a dense export (denseExport), in one directory.
const (
	denseBase      = "base.fvecs"      // the shard's rows widened to float32, TEXMEX layout
	denseBaseIDs   = "base_ids.jsonl"  // one JSON string per row: the passage id of that row
	denseQueries   = "queries.fvecs"   // the query vectors (E5 "query: " prefix), row i for line i
	denseQueryText = "queries.jsonl"   // one JSON string per row: the query text
	denseComplete  = ".peers-complete" // written last
)

// denseReady says why the dense route cannot run here (nil: it can):
// the model directory, ONNX Runtime and, when the peer is measured, its
// faiss + NumPy.
func denseReady(o Options) error {
	if o.Model == "" {
		return fmt.Errorf("%w: no E5 model for the dense route (make testmodel, or Options.Model)", ErrMissing)
	}
	if _, err := os.Stat(filepath.Join(o.Model, "model.onnx")); err != nil {
		return fmt.Errorf("%w: dense route model: %v (make testmodel)", ErrMissing, err)
	}
	if _, err := os.Stat(o.ORTLib); err != nil {
		return fmt.Errorf("%w: ONNX Runtime for the dense route: %v (scripts/setup.sh, or set ONNXRUNTIME_LIB)", ErrMissing, err)
	}
	if !slices.Contains(o.Serve.Systems, peerSearchR1) {
		return nil
	}
	if err := pyImports(searchR1DenseEnv(o), "faiss", "numpy", "fastapi", "uvicorn", "xapian", "torch"); err != nil {
		return fmt.Errorf("%w: python3-faiss python3-numpy python3-torch for the dense peer (make bench-setup): %v", ErrMissing, err)
	}
	if _, err := os.Stat(filepath.Join(o.Model, "model.safetensors")); err != nil {
		return fmt.Errorf("%w: the dense peer's torch encoder loads model.safetensors: %v (make testmodel writes it; an older .cache/models/tiny without it: delete it and rerun)", ErrMissing, err)
	}
	return nil
}

// searchR1FaissBuild is the faiss build the dense peer loads: the AVX2 one
// when `make bench-setup` built it, else Debian's.
func searchR1FaissBuild(o Options) string {
	if avx2Built(o) {
		return BuildAVX2
	}
	return BuildDebian
}

// searchR1DenseEnv is the dense peer's environment: its faiss build on
// PYTHONPATH, OpenMP OpenBLAS, all cores, passive OpenMP waits.
func searchR1DenseEnv(o Options) []string {
	return faissEnv(o, searchR1FaissBuild(o), runtime.NumCPU())
}

// denseIndex returns an index of o.Corpus with a vector file built by
// o.Model, or imported from o.DenseVectors (once, in WorkDir; keyed by corpus,
// binary, model and vectors).
func denseIndex(ctx context.Context, o Options, bin string, progress io.Writer) (string, error) {
	key := corpusKey(o.Corpus) + "-" + corpusKey(bin) + "-" + corpusKey(filepath.Join(o.Model, "model.onnx"))
	if o.DenseVectors != "" {
		key += "-" + corpusKey(o.DenseVectors)
	}
	dir := filepath.Join(o.WorkDir, "rlsearch-dense-"+key)
	done := filepath.Join(dir, ".peers-complete")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	fmt.Fprintf(progress, "peers: indexing %s with the dense model %s into %s\n", o.Corpus, o.Model, dir)
	cmd := exec.CommandContext(ctx, bin, "index", "--corpus", o.Corpus, "--model", o.Model, "--out", dir, "--force", "--quiet")
	if o.DenseVectors != "" {
		cmd.Args = append(cmd.Args, "--vectors", o.DenseVectors)
	}
	cmd.Env = env("ONNXRUNTIME_LIB", o.ORTLib)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: rlsearch index --model: %v\n%s", ErrPeer, err, out)
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// denseExport writes, once per (index, query set), the vectors the dense
// peer searches: the shard's rows as float32 .fvecs with their passage ids,
// and qs encoded by o.Model through embed (the encoder ours serves with,
// E5 "query: " prefix) with their texts. It returns the directory.
func denseExport(ctx context.Context, o Options, ix string, qs []string, progress io.Writer) (string, error) {
	h := corpusKey(filepath.Join(ix, index.DenseFile)) + "-" + corpusKey(o.Questions) + fmt.Sprintf("-%d", len(qs))
	dir := filepath.Join(o.WorkDir, "dense-vectors-"+h)
	if _, err := os.Stat(filepath.Join(dir, denseComplete)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "peers: exporting the vector file of %s and %d query vectors into %s\n", ix, len(qs), dir)
	flat, err := ann.ReadVectorFile(filepath.Join(ix, index.DenseFile))
	if err != nil {
		return "", fmt.Errorf("%w: vector file: %v", ErrPeer, err)
	}
	if flat.IDs() != nil {
		return "", fmt.Errorf("%w: %s: a vector file with an id table is not supported by the dense peer", ErrPeer, ix)
	}
	d := flat.Dim()
	if err := writeVecFile(filepath.Join(dir, denseBase), flat.Vectors(0, flat.Len()), d); err != nil {
		return "", err
	}
	ds, err := docstore.Open(filepath.Join(ix, index.DocsFile), 0)
	if err != nil {
		return "", fmt.Errorf("%w: docstore: %v", ErrPeer, err)
	}
	defer ds.Close()
	if ds.Len() != flat.Len() {
		return "", fmt.Errorf("%w: %s holds %d passages, its vector file %d rows", ErrPeer, ix, ds.Len(), flat.Len())
	}
	ids := make([]string, 0, ds.Len())
	if err := ds.Scan(func(_ int32, doc rlsearch.Document) error { ids = append(ids, doc.ID); return nil }); err != nil {
		return "", fmt.Errorf("%w: docstore: %v", ErrPeer, err)
	}
	if err := writeJSONLines(filepath.Join(dir, denseBaseIDs), ids); err != nil {
		return "", err
	}
	enc, err := embed.Open(embed.Config{Dir: o.Model, ORTLib: o.ORTLib})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrMissing, err)
	}
	defer enc.Close()
	if enc.Dim() != d {
		return "", fmt.Errorf("%w: model %s has dimension %d, the shard %d", ErrPeer, o.Model, enc.Dim(), d)
	}
	// Distinct texts only: the table is keyed by text.
	seen := map[string]bool{}
	var texts []string
	for _, q := range qs {
		if !seen[q] && strings.TrimSpace(q) != "" {
			seen[q] = true
			texts = append(texts, q)
		}
	}
	qv, err := enc.EncodeQueries(ctx, texts)
	if err != nil {
		return "", fmt.Errorf("%w: encoding the queries: %v", ErrPeer, err)
	}
	if err := writeVecFile(filepath.Join(dir, denseQueries), qv, d); err != nil {
		return "", err
	}
	if err := writeJSONLines(filepath.Join(dir, denseQueryText), texts); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, denseComplete), nil, 0o644)
}

// writeVecFile writes rows of dimension d (TEXMEX .fvecs: per row an int32
// dimension, then d float32, little-endian) atomically.
func writeVecFile(path string, v []float32, d int) error {
	return atomicfile.WriteFile(path, 0o644, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		var b [4]byte
		for i := 0; i+d <= len(v); i += d {
			binary.LittleEndian.PutUint32(b[:], uint32(d))
			w.Write(b[:])
			for _, x := range v[i : i+d] {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				w.Write(b[:])
			}
		}
		return w.Flush()
	})
}

// writeJSONLines writes one JSON string per line atomically.
func writeJSONLines(path string, ss []string) error {
	return jsonl.WriteFile(path, nil, func(w *jsonl.Writer) error {
		for _, s := range ss {
			if err := w.Write(s); err != nil {
				return err
			}
		}
		return nil
	})
}
