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
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/docstore"
)

// File names inside an index directory.
const (
	MetaFile  = "meta.json"
	DocsFile  = "docs.zst"
	BM25File  = "bm25.idx"
	DenseFile = "dense.shard"
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
	// a dense shard. ConfigHash identifies its configuration in the shard.
	Encoder     rlsearch.Encoder
	ConfigHash  uint64
	DType       ann.DType // shard storage, default ann.FP16
	EncodeBatch int       // passages per encoder call, default DefaultEncodeBatch

	// Vectors, when set, imports the dense shard from this vector file
	// (faiss IndexFlatIP/IndexFlatL2, .npy float32/float16, .fvecs; see
	// ann/vecfile) instead of encoding: one row per indexed passage, in
	// corpus order. Encoder, when also set, is not run; its dimension must
	// match. DType may then also be ann.INT8 (two passes over the file).
	Vectors string
	// VectorsEncoder names the model that made Vectors (recorded in the
	// shard); required when Encoder is nil.
	VectorsEncoder string
	// VectorsUnnormalized accepts inner-product vectors whose L2 norm is
	// not 1 (served by inner product as they are). L2 files must be
	// normalised regardless.
	VectorsUnnormalized bool

	// Progress receives a progress bar (bytes of corpus read, passages/s,
	// ETA); nil for none.
	Progress io.Writer
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
}

// BM25Meta describes the BM25 index.
type BM25Meta struct {
	K1        float64 `json:"k1"`
	B         float64 `json:"b"`
	NumTerms  int     `json:"num_terms"`
	AvgDocLen float64 `json:"avg_doc_len"`
}

// DenseMeta describes the dense shard.
type DenseMeta struct {
	Model      string `json:"model"`
	Dim        int    `json:"dim"`
	DType      string `json:"dtype"`
	ConfigHash uint64 `json:"config_hash"`
	// ImportedFrom is the vector file the shard was imported from
	// (BuildConfig.Vectors); empty when the passages were encoded.
	ImportedFrom string `json:"imported_from,omitempty"`
}

// Build reads cfg.Corpus once and writes a complete index to cfg.Dir.
// It fails if Dir exists unless cfg.Force is set. Errors from the corpus
// name the line; ctx cancellation stops the build and removes the
// temporary directory.
func Build(ctx context.Context, cfg BuildConfig) (*Meta, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkReplace(cfg.Dir, cfg.Force); err != nil {
		return nil, err
	}
	start := time.Now()
	parent := filepath.Dir(filepath.Clean(cfg.Dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(cfg.Dir)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	meta, err := build(ctx, cfg, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	meta.BuildSeconds = time.Since(start).Seconds()
	if err := writeJSON(filepath.Join(tmp, MetaFile), meta); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := publishModes(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := replaceDir(tmp, cfg.Dir); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return meta, nil
}

func build(ctx context.Context, cfg BuildConfig, dir string) (*Meta, error) {
	rd, err := corpus.Open(cfg.Corpus)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var total int64 = -1
	if st, err := os.Stat(cfg.Corpus); err == nil {
		total = st.Size()
	}
	bar := newBar(cfg.Progress, total)

	docs, err := docstore.Create(filepath.Join(dir, DocsFile), 0)
	if err != nil {
		return nil, err
	}
	defer docs.Abort()
	bb, err := bm25.NewBuilder(cfg.BM25)
	if err != nil {
		return nil, err
	}
	var dense *denseWriter
	var vecs *vecfile.Reader
	if cfg.Vectors != "" {
		if vecs, err = openVectors(cfg); err != nil {
			return nil, err
		}
		defer vecs.Close()
	} else if cfg.Encoder != nil {
		if dense, err = newDenseWriter(ctx, cfg, filepath.Join(dir, DenseFile)); err != nil {
			return nil, err
		}
		defer dense.abort()
	}

	n := 0
	started := time.Now()
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Corpus, err)
		}
		if err := docs.Add(p.Document); err != nil {
			return nil, err
		}
		if _, err := bb.Add(p.Contents); err != nil {
			return nil, fmt.Errorf("index: bm25 add line %d: %w", p.Line, err)
		}
		if dense != nil {
			if err := dense.add(p.Contents); err != nil {
				return nil, err
			}
		}
		n++
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			bar.update(rd.BytesRead(), n, started)
		}
	}
	bar.update(rd.BytesRead(), n, started)
	if n == 0 {
		return nil, fmt.Errorf("index: %s has no non-empty passages (%d skipped)", cfg.Corpus, rd.Skipped())
	}
	if err := docs.Close(); err != nil {
		return nil, err
	}
	bar.describe(fmt.Sprintf("writing BM25 index (%d passages)", n))
	if err := bb.WriteFile(filepath.Join(dir, BM25File)); err != nil {
		return nil, err
	}
	meta := &Meta{Version: FormatVersion, Corpus: cfg.Corpus, NumDocs: n, Skipped: rd.Skipped(), Created: time.Now().UTC()}
	if dense != nil {
		bar.describe("finishing dense shard")
		if err := dense.close(); err != nil {
			return nil, err
		}
		meta.Dense = &DenseMeta{Model: cfg.Encoder.Name(), Dim: cfg.Encoder.Dim(), DType: dense.dtype.String(), ConfigHash: cfg.ConfigHash}
	}
	if vecs != nil {
		bar.describe(fmt.Sprintf("importing %s", vecs.Info()))
		if meta.Dense, err = importVectors(ctx, cfg, vecs, n, rd.Skipped(), filepath.Join(dir, DenseFile), cfg.Progress); err != nil {
			return nil, err
		}
	}
	bar.finish()
	bix, err := bm25.Open(filepath.Join(dir, BM25File))
	if err != nil {
		return nil, fmt.Errorf("index: reopen bm25: %w", err)
	}
	k1, b := bix.Params()
	meta.BM25 = BM25Meta{K1: round6(k1), B: round6(b), NumTerms: bix.NumTerms(), AvgDocLen: bix.AvgDocLen()}
	return meta, nil
}

// denseWriter embeds passages in batches on a separate goroutine, so that
// reading and BM25 indexing overlap with the encoder, and appends the
// vectors to the shard in row order.
type denseWriter struct {
	ctx    context.Context
	cancel context.CancelFunc
	enc    rlsearch.Encoder
	w      *ann.ShardWriter
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
	w, err := ann.CreateShard(path, ann.Header{DType: dt, Dim: cfg.Encoder.Dim(), Normalized: true, EncoderID: cfg.Encoder.Name(), ConfigHash: cfg.ConfigHash})
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

// progress reports build progress on a writer: a progress bar (bytes of
// corpus read, passages/s, ETA) when the writer is a terminal, else a plain
// line every 10 s, so that logs are not filled with carriage returns.
type progress struct {
	w         io.Writer
	bar       *progressbar.ProgressBar
	total     int64
	lastPrint time.Time
}

func newBar(w io.Writer, total int64) *progress {
	if w == nil {
		return &progress{}
	}
	p := &progress{w: w, total: total, lastPrint: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("indexing"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
		)
	}
	return p
}

func (p *progress) update(bytes int64, n int, started time.Time) {
	if p.w == nil {
		return
	}
	rate := float64(n) / max(time.Since(started).Seconds(), 1e-9)
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("indexing: %d passages (%.0f passages/s)", n, rate))
		p.bar.Set64(bytes)
		return
	}
	if time.Since(p.lastPrint) >= 10*time.Second {
		p.lastPrint = time.Now()
		pct := 0.0
		if p.total > 0 {
			pct = 100 * float64(bytes) / float64(p.total)
		}
		fmt.Fprintf(p.w, "indexing: %d passages, %.0f%% of the corpus read, %.0f passages/s\n", n, pct, rate)
	}
}

func (p *progress) describe(s string) {
	if p.bar != nil {
		p.bar.Describe(s)
	} else if p.w != nil {
		fmt.Fprintf(p.w, "indexing: %s\n", s)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// writeJSON writes v as indented JSON atomically (temp file + rename).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
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
