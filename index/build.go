package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/docstore"
	"github.com/rlsearch/rlsearch/internal/atomicfile"
	"github.com/rlsearch/rlsearch/internal/progress"
)

// File names inside an index directory.
const (
	MetaFile = "meta.json"
	DocsFile = "docs.zst"
	// URLsFile holds each passage's "url" (a docstore whose contents are
	// the URLs), written only when the corpus has at least one.
	URLsFile  = "urls.zst"
	BM25File  = "bm25.idx"
	DenseFile = "dense.shard"
	// HNSWFile holds the vector file's HNSW graph: imported from a faiss
	// IndexHNSWFlat by --vectors, or built and cached by the first Open
	// with the hnsw backend.
	HNSWFile = "dense.hnsw"
	// FP16RowsFile holds the vector file's vectors as raw fp16 rows
	// (ann.WriteFP16Rows), the re-rank store of a compressed HNSW graph
	// (OpenConfig.HNSWCompressed): written by the first such open, not by
	// the build.
	FP16RowsFile = "dense.f16"
)

// FormatVersion is the version of the index directory layout in meta.json.
const FormatVersion = 1

// DefaultEncodeBatch is the number of passages sent to the encoder per call
// while building (the encoder cuts it into its own length-sorted sub-batches).
const DefaultEncodeBatch = 256

// BuildConfig configures Build. Zero values mean the documented defaults.
type BuildConfig struct {
	Corpus string // corpus JSONL (plain, .gz, .zst); required
	Dir    string // index directory to create; required
	Force  bool   // replace an existing Dir

	BM25 bm25.Config // BM25 parameters (k1 = 0.9, b = 0.4 by default)

	// Encoder, when non-nil, embeds every passage (E5 "passage: " prefix) into
	// a vector file. ConfigHash identifies its configuration in the vector file.
	Encoder     rlsearch.Encoder
	ConfigHash  uint64
	DType       ann.DType // vector file storage, default ann.FP16
	EncodeBatch int       // passages per encoder call, default DefaultEncodeBatch

	// Vectors, when set, imports the vectors of the vector file from this file
	// (faiss IndexFlatIP/L2, IndexHNSWFlat, IndexIVFFlat, fp16
	// IndexScalarQuantizer, IndexIDMap/IDMap2 around them, .npy
	// float32/float16, .fvecs; see ann/vecfile) instead of encoding: one
	// row per indexed passage, in corpus order (faiss ids are corpus rows).
	// The graph of an IndexHNSWFlat is imported too, as HNSWFile, so the
	// hnsw backend serves faiss's own graph. Encoder, when also set, is not
	// run; its dimension must match. DType may then also be ann.INT8 (two
	// passes over the file).
	Vectors string
	// VectorsEncoder names the model that made Vectors (recorded in the
	// shard); required when Encoder is nil.
	VectorsEncoder string
	// VectorsUnnormalized accepts inner-product vectors whose L2 norm is
	// not 1 (served by inner product as they are). L2 files must be
	// normalised regardless.
	VectorsUnnormalized bool

	// Shards > 0 splits the corpus into that many shards (BuildShards;
	// Build refuses it). 0 builds one index (Build).
	Shards int
	// Only lists the shards BuildShards builds (0-based, distinct); empty
	// means all of them.
	Only []int

	// Progress receives a progress bar (bytes of corpus read, passages/s,
	// ETA) on a terminal, else a plain line every 10 s, and the names of
	// the phases; nil for none.
	Progress io.Writer
	// Log receives one line per leftover of an interrupted build that
	// Build removes (with its size); nil for none.
	Log io.Writer
}

// Validate reports the first bad field.
func (c BuildConfig) Validate() error {
	switch {
	case c.Corpus == "":
		return errors.New("index: BuildConfig.Corpus is required")
	case c.Dir == "":
		return errors.New("index: BuildConfig.Dir is required")
	case c.EncodeBatch < 0:
		return fmt.Errorf("index: BuildConfig.EncodeBatch = %d must be ≥ 0", c.EncodeBatch)
	case c.DType == ann.INT8 && c.Vectors != "":
	case c.DType != 0 && c.DType != ann.FP16 && c.DType != ann.FP32:
		return fmt.Errorf("index: BuildConfig.DType %v is not fp16 or fp32 (int8 only when importing with BuildConfig.Vectors, --vectors)", c.DType)
	case c.Shards < 0 || c.Shards > bm25.MaxShards:
		return fmt.Errorf("%w: BuildConfig.Shards = %d, want 0 (one index) to %d (--shards)", ErrShards, c.Shards, bm25.MaxShards)
	case len(c.Only) > 0 && c.Shards == 0:
		return fmt.Errorf("%w: BuildConfig.Only (--shard) needs BuildConfig.Shards (--shards)", ErrShards)
	}
	seen := map[int]bool{}
	for _, i := range c.Only {
		if i < 0 || i >= c.Shards || seen[i] {
			return fmt.Errorf("%w: BuildConfig.Only (--shard) has %d: want distinct shards from 0 to %d", ErrShards, i, c.Shards-1)
		}
		seen[i] = true
	}
	return c.BM25.Validate()
}

// Meta is the content of meta.json.
type Meta struct {
	Version      int        `json:"version"`
	Corpus       string     `json:"corpus"`
	NumDocs      int        `json:"num_docs"`
	Skipped      int        `json:"skipped_empty"`
	Created      time.Time  `json:"created"`
	BuildSeconds float64    `json:"build_seconds"`
	BM25         BM25Meta   `json:"bm25"`
	Dense        *DenseMeta `json:"dense,omitempty"`
	// Shard says which shard of a sharded build (BuildShards) this
	// directory is; nil for an index of a whole corpus.
	Shard *ShardMeta `json:"shard,omitempty"`
	// URLs names URLsFile when the corpus gave passages a "url" ("" for
	// none; indexes built before it have none either).
	URLs string `json:"urls,omitempty"`
}

// BM25Meta describes the BM25 index.
type BM25Meta struct {
	K1        float64 `json:"k1"`
	B         float64 `json:"b"`
	NumTerms  int     `json:"num_terms"`
	AvgDocLen float64 `json:"avg_doc_len"` // a shard's: the corpus's
	// CorpusDocCount and CorpusSumTF are a shard's corpus-wide document
	// count and number of terms, which it scores with (0 unsharded).
	CorpusDocCount int    `json:"corpus_doc_count,omitempty"`
	CorpusSumTF    uint64 `json:"corpus_sum_tf,omitempty"`
}

// DenseMeta describes the vector file.
type DenseMeta struct {
	Model      string `json:"model"`
	Dim        int    `json:"dim"`
	DType      string `json:"dtype"`
	ConfigHash uint64 `json:"config_hash"`
	// ImportedFrom is the vector file the shard was imported from
	// (BuildConfig.Vectors); empty when the passages were encoded.
	ImportedFrom string `json:"imported_from,omitempty"`
	// ImportedGraph describes the faiss HNSW graph imported as HNSWFile
	// (e.g. "IndexHNSW(M=64, storage IndexFlatIP), efSearch 16"); empty
	// when none was.
	ImportedGraph string `json:"imported_graph,omitempty"`
}

// Build reads cfg.Corpus once and writes a complete index to cfg.Dir.
// It fails if Dir exists unless cfg.Force is set. Errors from the corpus
// name the line; ctx cancellation stops the build and removes the
// temporary directory.
//
// The build works in a temporary sibling directory, Dir's name +
// ".tmp-N", under a lock (see cleanStale), and renames it to Dir only when
// complete, so Dir never holds a partial index. Leftovers of builds that
// died (even by SIGKILL) are removed at the start of the next build of the
// same Dir; a concurrent live build's directory is never touched.
func Build(ctx context.Context, cfg BuildConfig) (*Meta, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Shards > 0 {
		return nil, fmt.Errorf("%w: BuildConfig.Shards = %d: build shards with BuildShards", ErrShards, cfg.Shards)
	}
	if err := checkReplace(cfg.Dir, cfg.Force); err != nil {
		return nil, err
	}
	start := time.Now()
	parent := filepath.Dir(filepath.Clean(cfg.Dir))
	base := filepath.Base(filepath.Clean(cfg.Dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err := cleanStale(parent, base, cfg.Log); err != nil && cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "%v (continuing)\n", err)
	}
	lock, err := acquireBuild(parent, base)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	tmp := lock.tmp
	var total int64 = -1 // unknown for a pipe
	if st, err := os.Stat(cfg.Corpus); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	bar := progress.NewPass(cfg.Progress, total, "indexing")
	defer bar.Finish()
	meta, err := build(ctx, cfg, tmp, bar)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	bar.Phase("writing "+MetaFile+" and publishing "+cfg.Dir, true)
	meta.BuildSeconds = time.Since(start).Seconds()
	if err := writeJSON(filepath.Join(tmp, MetaFile), meta); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := publishModes(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	// Again at publish time: another build may have published cfg.Dir
	// while this one ran, and only --force may replace it.
	if err := checkReplace(cfg.Dir, cfg.Force); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := replaceDir(tmp, cfg.Dir); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return meta, nil
}

func build(ctx context.Context, cfg BuildConfig, dir string, bar *progress.Pass) (*Meta, error) {
	p := &part{dir: dir, lo: 0, hi: math.MaxInt}
	res, err := buildParts(ctx, cfg, []*part{p}, nil, bar)
	if err != nil {
		return nil, err
	}
	if res.rows == 0 {
		return nil, fmt.Errorf("index: %s has no non-empty passages (%d skipped)", cfg.Corpus, res.skipped)
	}
	return p.meta, nil
}

// part is one index directory that a build writes: the whole corpus, or
// the rows [lo, hi) of one shard.
type part struct {
	dir    string // the (temporary) directory written into
	lo, hi int    // corpus rows; hi = math.MaxInt for an unsharded build
	docs   *docstore.Writer
	urls   *docstore.Writer // created at the part's first passage with a url
	dense  *denseWriter
	meta   *Meta // filled by buildParts
}

// addURL stores the url of the part's next row (its docstore already
// holds the row's passage), creating URLsFile at the first non-empty
// one, with empty URLs for the rows before it.
func (p *part) addURL(id, url string) error {
	if p.urls == nil {
		if url == "" {
			return nil
		}
		w, err := docstore.Create(filepath.Join(p.dir, URLsFile), 0)
		if err != nil {
			return err
		}
		p.urls = w
		for range p.docs.Len() - 1 {
			if err := w.Add(rlsearch.Document{}); err != nil {
				return err
			}
		}
	}
	return p.urls.Add(rlsearch.Document{ID: id, Contents: url})
}

func (p *part) holds(row int) bool { return row >= p.lo && row < p.hi }

// buildResult is what buildParts learnt about the corpus.
type buildResult struct {
	rows, skipped int
	sha256        string // hex, of the rows (corpusHasher); sharded builds only
}

// buildParts reads cfg.Corpus once and writes every part: each passage goes
// to BM25 (one index, or with plan the shard builder, which sees every row
// for the corpus-wide statistics) and, when a part holds its row, to that
// part's docstore and vector file. parts are in row order, disjoint; the
// meta of each is filled in (BuildSeconds left 0). With plan the corpus
// must have exactly plan's rows.
func buildParts(ctx context.Context, cfg BuildConfig, parts []*part, plan *bm25.ShardPlan, bar *progress.Pass) (buildResult, error) {
	var res buildResult
	rd, err := corpus.Open(cfg.Corpus)
	if err != nil {
		return res, err
	}
	defer rd.Close()

	for _, p := range parts {
		if p.docs, err = docstore.Create(filepath.Join(p.dir, DocsFile), 0); err != nil {
			return res, err
		}
		defer p.docs.Abort()
		defer func() {
			if p.urls != nil {
				p.urls.Abort()
			}
		}()
	}
	bcfg := cfg.BM25
	if bcfg.TempDir == "" {
		// Spilled runs live inside the (first) build's temporary
		// directory, so a crashed build's runs go with it (see the build
		// lock).
		bcfg.TempDir = parts[0].dir
	}
	var bb *bm25.Builder
	if plan != nil {
		bb, err = bm25.NewShardBuilder(bcfg, *plan)
	} else {
		bb, err = bm25.NewBuilder(bcfg)
	}
	if err != nil {
		return res, err
	}
	defer bb.Abort()
	var vecs *vecfile.Reader
	if cfg.Vectors != "" {
		if vecs, err = openVectors(cfg); err != nil {
			return res, err
		}
		defer vecs.Close()
	} else if cfg.Encoder != nil {
		for _, p := range parts {
			if p.dense, err = newDenseWriter(ctx, cfg, filepath.Join(p.dir, DenseFile)); err != nil {
				return res, err
			}
			defer p.dense.abort()
		}
	}
	var hash *corpusHasher
	if plan != nil {
		hash = newCorpusHasher()
	}

	// Pipeline: the corpus is read and decoded on its own goroutine;
	// passages are added in row order here; docstore blocks are compressed
	// on the docstore's workers and dense batches encoded on the dense
	// writer's goroutine.
	readCtx, stopRead := context.WithCancel(ctx)
	batches := readCorpus(readCtx, rd)
	defer func() { // before rd.Close: stop and drain the reader
		stopRead()
		for range batches {
		}
	}()
	bar.Phase("indexing", false)
	n, cur := 0, 0
	var lastBytes int64
	for b := range batches {
		for _, p := range b.passages {
			if hash != nil {
				hash.add(p.Document)
			}
			if _, err := bb.Add(p.Contents); err != nil {
				return res, fmt.Errorf("index: bm25 add line %d: %w", p.Line, err)
			}
			for cur+1 < len(parts) && n >= parts[cur].hi {
				cur++
			}
			if pt := parts[cur]; pt.holds(n) {
				if err := pt.docs.Add(p.Document); err != nil {
					return res, err
				}
				if err := pt.addURL(p.ID, p.URL); err != nil {
					return res, err
				}
				if pt.dense != nil {
					if err := pt.dense.add(p.Contents); err != nil {
						return res, err
					}
				}
			}
			n++
		}
		lastBytes = b.bytes
		if b.err != nil {
			return res, fmt.Errorf("%s: %w", cfg.Corpus, b.err)
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		bar.Update(b.bytes, n)
	}
	if err := ctx.Err(); err != nil { // the reader stops early on cancellation
		return res, err
	}
	bar.Update(lastBytes, n)
	res.rows, res.skipped = n, rd.Skipped()
	if n == 0 {
		return res, nil
	}
	if plan != nil {
		if want := int(plan.Bounds[len(plan.Bounds)-1]); n != want {
			return res, fmt.Errorf("index: %s has %d passages now but %d when counted at the start of the build: the corpus changed while it was read", cfg.Corpus, n, want)
		}
		res.sha256 = hash.sum()
	}
	for _, p := range parts {
		if err := p.docs.Close(); err != nil {
			return res, err
		}
		if p.urls != nil {
			if err := p.urls.Close(); err != nil {
				return res, err
			}
		}
	}
	if plan == nil {
		bar.Phase(fmt.Sprintf("merging BM25 runs and writing %s (%d passages)", BM25File, n), true)
		if err := bb.WriteFile(filepath.Join(parts[0].dir, BM25File)); err != nil {
			return res, err
		}
	} else {
		paths := make([]string, plan.Shards())
		for i, p := range parts {
			paths[shardOf(plan, p.lo)] = filepath.Join(parts[i].dir, BM25File)
		}
		bar.Phase(fmt.Sprintf("merging BM25 runs and writing %d shards' %s (%d passages)", len(parts), BM25File, n), true)
		if err := bb.WriteShards(paths); err != nil {
			return res, err
		}
	}
	var dense *DenseMeta
	for _, p := range parts {
		if p.dense != nil {
			bar.Phase("finishing vector file", true)
			if err := p.dense.close(); err != nil {
				return res, err
			}
			dense = &DenseMeta{Model: cfg.Encoder.Name(), Dim: cfg.Encoder.Dim(), DType: p.dense.dtype.String(), ConfigHash: cfg.ConfigHash}
		}
	}
	if vecs != nil {
		bar.Phase(fmt.Sprintf("importing %s", vecs.Info()), true)
		dests := make([]vectorDest, len(parts))
		for i, p := range parts {
			dests[i] = vectorDest{lo: p.lo, hi: min(p.hi, n), path: filepath.Join(p.dir, DenseFile)}
		}
		if dense, err = importVectors(ctx, cfg, vecs, n, rd.Skipped(), dests, cfg.Progress); err != nil {
			return res, err
		}
	}
	for _, p := range parts {
		rows := min(p.hi, n) - p.lo
		p.meta = &Meta{Version: FormatVersion, Corpus: cfg.Corpus, NumDocs: rows, Skipped: rd.Skipped(), Created: time.Now().UTC(), Dense: dense}
		if p.urls != nil {
			p.meta.URLs = URLsFile
		}
		bix, err := bm25.Open(filepath.Join(p.dir, BM25File))
		if err != nil {
			return res, fmt.Errorf("index: reopen bm25: %w", err)
		}
		k1, b := bix.Params()
		p.meta.BM25 = BM25Meta{K1: round6(k1), B: round6(b), NumTerms: bix.NumTerms(), AvgDocLen: bix.AvgDocLen()}
		if plan != nil {
			sh := bix.Shard()
			p.meta.BM25.CorpusDocCount, p.meta.BM25.CorpusSumTF = sh.DocCount, sh.SumTF
		}
		bix.Close()
	}
	return res, nil
}

// shardOf is the shard of plan that holds row.
func shardOf(plan *bm25.ShardPlan, row int) int {
	i, _ := slices.BinarySearch(plan.Bounds, int32(row)+1)
	return i - 1
}

// denseWriter embeds passages in batches on a separate goroutine, so that
// reading and BM25 indexing overlap with the encoder, and appends the
// vectors to the shard in row order.
type denseWriter struct {
	ctx    context.Context
	cancel context.CancelFunc
	enc    rlsearch.Encoder
	w      *ann.VectorFileWriter
	dtype  ann.DType
	batch  []string
	size   int
	work   chan []string
	done   chan error
}

func newDenseWriter(ctx context.Context, cfg BuildConfig, path string) (*denseWriter, error) {
	dt := cfg.DType
	if dt == 0 {
		dt = ann.FP16
	}
	w, err := ann.CreateVectorFile(path, ann.Header{DType: dt, Dim: cfg.Encoder.Dim(), Normalized: true, EncoderID: cfg.Encoder.Name(), ConfigHash: cfg.ConfigHash})
	if err != nil {
		return nil, err
	}
	size := cfg.EncodeBatch
	if size == 0 {
		size = DefaultEncodeBatch
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &denseWriter{ctx: ctx, cancel: cancel, enc: cfg.Encoder, w: w, dtype: dt, size: size,
		work: make(chan []string, 2), done: make(chan error, 1)}
	go d.loop(d.work)
	return d, nil
}

func (d *denseWriter) loop(work <-chan []string) {
	var first error
	for texts := range work {
		if first != nil {
			continue // drain
		}
		vecs, err := d.enc.EncodePassages(d.ctx, texts)
		if err == nil {
			err = d.w.Append(vecs)
		}
		if err != nil {
			first = fmt.Errorf("index: encode passages: %w", err)
			d.cancel()
		}
	}
	d.done <- first
}

func (d *denseWriter) add(text string) error {
	d.batch = append(d.batch, text)
	if len(d.batch) < d.size {
		return nil
	}
	return d.flush()
}

func (d *denseWriter) flush() error {
	if len(d.batch) == 0 {
		return nil
	}
	select {
	case d.work <- d.batch:
	case <-d.ctx.Done():
		return d.finish()
	}
	d.batch = make([]string, 0, d.size)
	return nil
}

// finish closes the work queue and waits for the encoder goroutine.
func (d *denseWriter) finish() error {
	if d.work != nil {
		close(d.work)
		d.work = nil
		err := <-d.done
		if err == nil {
			err = d.ctx.Err()
		}
		d.cancel()
		return err
	}
	return nil
}

func (d *denseWriter) close() error {
	if err := d.flush(); err != nil {
		return err
	}
	if err := d.finish(); err != nil {
		return err
	}
	return d.w.Close()
}

func (d *denseWriter) abort() {
	if d.work != nil {
		d.cancel()
		d.finish()
	}
	d.w.Abort()
}

// writeJSON writes v as indented JSON atomically (temp file + rename).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// checkReplace refuses to build into an existing path unless force is set,
// and even then only replaces an empty directory or an index directory
// (one with meta.json): --force must never delete unrelated data.
func checkReplace(dir string, force bool) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if !force {
		return fmt.Errorf("index: %s already exists (use --force to replace an index)", dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("index: %s exists and is not a directory; refusing to replace it", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("index: %s is not an index directory (no %s) and is not empty; --force only replaces an index", dir, MetaFile)
	}
	return nil
}

// publishModes makes the finished index readable by others (0755 for
// directories, 0644 for files): temporary files and directories are
// created private.
func publishModes(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	})
}

// replaceDir moves the finished tmp directory to dir, replacing an existing
// dir by first moving it aside, so dir always holds a complete index.
func replaceDir(tmp, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("index: move old %s aside: %w", dir, err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.Rename(old, dir)
			return fmt.Errorf("index: %w", err)
		}
		return os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// round6 rounds to 6 decimals: the BM25 file stores k1 and b as float32,
// and meta.json should show 0.9, not 0.8999999761581421.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
