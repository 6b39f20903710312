package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/docstore"
	"github.com/rlsearch/rlsearch/internal/progress"
)

// ErrCheck is wrapped by every error of Check that reports a damaged or
// inconsistent index (as opposed to one that could not be read at all).
var ErrCheck = errors.New("index: integrity check failed")

// CheckConfig configures Check.
type CheckConfig struct {
	// Progress receives one line per check and, during the long checks,
	// a progress line every 10 s (blocks done, %, ETA); nil for none.
	Progress io.Writer
}

// verifier holds what the checks learn about the index.
type verifier struct {
	dir   string
	cfg   CheckConfig
	meta  Meta
	docs  int    // rows in docs.zst
	bm25  int    // documents in bm25.idx
	dense int    // vectors in dense.shard
	hasDS bool   // dense.shard exists
	note  string // what the last check wants said instead of "ok"
}

// verifyCheck is one named check of Check.
type verifyCheck struct {
	name string
	run  func(v *verifier, ctx context.Context) error
}

// verifyChecks lists Check's checks in the order they run; later checks
// use what earlier ones recorded in v. Add a check here to extend
// `rlsearch check`.
func verifyChecks() []verifyCheck {
	return []verifyCheck{
		{MetaFile, (*verifier).checkMeta},
		{DocsFile, (*verifier).checkDocs},
		{URLsFile, (*verifier).checkURLs},
		{BM25File, (*verifier).checkBM25},
		{DenseFile, (*verifier).checkDense},
		{FP16RowsFile, (*verifier).checkFP16Rows},
		{"counts", (*verifier).checkCounts},
	}
}

// Check reads every file of the index in dir once and checks it: meta.json
// parses and has this binary's format version; every docstore block passes
// its CRC, decompresses and parses (docstore.Store.Check); the BM25 file
// passes bm25.Index.Check (every postings chunk's CRC-32C, every term's
// structure); every block of the vector file (dense.shard) passes its CRC
// and decompresses (ann.VectorFileReader); the fp16 rows of a compressed
// HNSW (FP16RowsFile), when present, pass their header and rows CRC-32C
// and have the vector file's shape (that they hold its vectors is checked
// when they are opened, ann.(*HNSW).Compress); and the counts of passages
// agree across meta.json, the docstore, BM25 and the vector file. It
// stops at the first failure: the error names the file and, for a damaged
// block, the block and its byte offset; it wraps ErrCheck for a damaged or
// inconsistent index. Memory stays bounded (one block at a time) except
// for the BM25 check, which opens the BM25 index as serving does.
func Check(ctx context.Context, dir string, cfg CheckConfig) error {
	v := &verifier{dir: dir, cfg: cfg}
	for _, c := range verifyChecks() {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		v.note = "ok"
		if err := c.run(v, ctx); err != nil {
			return err
		}
		v.say("check: %s %s (%s)", c.name, v.note, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func (v *verifier) say(format string, args ...any) {
	if v.cfg.Progress != nil {
		fmt.Fprintf(v.cfg.Progress, format+"\n", args...)
	}
}

func (v *verifier) path(name string) string { return filepath.Join(v.dir, name) }

func (v *verifier) fail(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCheck}, args...)...)
}

// blockProgress prints "check: FILE: block i/n (p%), ETA d" every
// progressEvery while a file is checked block by block.
type blockProgress struct {
	v     *verifier
	name  string
	start time.Time
	last  time.Time
}

func (v *verifier) blocks(name string) *blockProgress {
	now := time.Now()
	return &blockProgress{v: v, name: name, start: now, last: now}
}

func (p *blockProgress) update(done, total int) {
	if p.v.cfg.Progress == nil || time.Since(p.last) < progress.Every || done == 0 {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start)
	frac := float64(done) / float64(max(total, 1))
	eta := time.Duration(float64(el) * (1 - frac) / frac).Round(time.Second)
	p.v.say("check: %s: block %d/%d (%.1f%%), ETA %s", p.name, done, total, 100*frac, eta)
}

func (v *verifier) checkMeta(ctx context.Context) error {
	raw, err := os.ReadFile(v.path(MetaFile))
	if err != nil {
		return fmt.Errorf("index: %s is not an index directory: %w", v.dir, err)
	}
	if err := json.Unmarshal(raw, &v.meta); err != nil {
		return v.fail("%s: %v", v.path(MetaFile), err)
	}
	if v.meta.Version != FormatVersion {
		return v.fail("%s: format version %d, this binary reads %d", v.path(MetaFile), v.meta.Version, FormatVersion)
	}
	if v.meta.NumDocs <= 0 {
		return v.fail("%s: num_docs %d", v.path(MetaFile), v.meta.NumDocs)
	}
	return nil
}

func (v *verifier) checkDocs(ctx context.Context) error {
	s, err := docstore.Open(v.path(DocsFile), 1)
	if err != nil {
		return v.wrap(err, docstore.ErrCorrupt)
	}
	defer s.Close()
	v.docs = s.Len()
	p := v.blocks(DocsFile)
	err = s.Check(func(done, total int) error {
		p.update(done, total)
		return ctx.Err()
	})
	return v.wrap(err, docstore.ErrCorrupt)
}

// checkURLs checks URLsFile like docs.zst, and its row count, when
// meta.json names it.
func (v *verifier) checkURLs(ctx context.Context) error {
	if v.meta.URLs == "" {
		v.note = "absent (the corpus gave no urls)"
		return nil
	}
	s, err := docstore.Open(v.path(v.meta.URLs), 1)
	if err != nil {
		return v.wrap(err, docstore.ErrCorrupt)
	}
	defer s.Close()
	if s.Len() != v.docs {
		return v.fail("%s has %d urls, %s %d passages", v.path(v.meta.URLs), s.Len(), DocsFile, v.docs)
	}
	p := v.blocks(v.meta.URLs)
	err = s.Check(func(done, total int) error {
		p.update(done, total)
		return ctx.Err()
	})
	return v.wrap(err, docstore.ErrCorrupt)
}

// wrap marks errors wrapping the package's corruption sentinel with
// ErrCheck too.
func (v *verifier) wrap(err, corrupt error) error {
	if err != nil && errors.Is(err, corrupt) {
		return fmt.Errorf("%w: %w", ErrCheck, err)
	}
	return err
}

func (v *verifier) checkBM25(ctx context.Context) error {
	bix, err := bm25.Open(v.path(BM25File))
	if err != nil {
		return v.wrap(err, bm25.ErrCorrupt)
	}
	v.bm25 = bix.NumDocs()
	defer bix.Close()
	if err := checkBM25Meta(v.meta.BM25, bix); err != nil {
		return v.fail("%s: %v", v.dir, err)
	}
	if err := checkShardMeta(v.meta, bix); err != nil {
		return v.fail("%s: %v", v.dir, err)
	}
	// Every postings chunk's CRC-32C and every term's structure (bm25.Open
	// checks only the header and section sizes).
	if err := bix.Check(); err != nil {
		return v.wrap(fmt.Errorf("%s: %w", v.path(BM25File), err), bm25.ErrCorrupt)
	}
	return nil
}

func (v *verifier) checkDense(ctx context.Context) error {
	_, err := os.Stat(v.path(DenseFile))
	v.hasDS = err == nil
	switch {
	case errors.Is(err, os.ErrNotExist) && v.meta.Dense == nil:
		v.note = "absent (BM25-only index)"
		return nil
	case errors.Is(err, os.ErrNotExist):
		return v.fail("%s: meta.json describes a vector file (%s) but the file is missing", v.path(DenseFile), v.meta.Dense.Model)
	case err != nil:
		return fmt.Errorf("index: %w", err)
	case v.meta.Dense == nil:
		return v.fail("%s exists but meta.json describes no vector file", v.path(DenseFile))
	}
	sr, err := ann.OpenVectorFileReader(v.path(DenseFile))
	if err != nil {
		// A version 1 shard is not streamable: read it whole.
		fl, err := ann.ReadVectorFile(v.path(DenseFile))
		if err != nil {
			return v.wrap(err, ann.ErrCorrupt)
		}
		v.dense = fl.Len()
		return v.checkDenseHeader(fl.Header())
	}
	defer sr.Close()
	h := sr.Header()
	if err := v.checkDenseHeader(h); err != nil {
		return err
	}
	p := v.blocks(DenseFile)
	total := (h.Count + h.BlockRows - 1) / h.BlockRows
	for b := 0; ; b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, _, err := sr.NextRaw()
		if err == io.EOF {
			break
		}
		if err != nil {
			return v.wrap(err, ann.ErrCorrupt)
		}
		p.update(b+1, total)
	}
	v.dense = h.Count
	return nil
}

// checkFP16Rows checks FP16RowsFile when it exists (written by the first
// OpenConfig.HNSWCompressed open): header, rows checksum, shape.
func (v *verifier) checkFP16Rows(ctx context.Context) error {
	path := v.path(FP16RowsFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		v.note = "absent (written by the first --hnsw-compressed open)"
		return nil
	}
	r, err := ann.OpenFP16Rows(path)
	if err != nil {
		return v.wrap(err, ann.ErrCorrupt)
	}
	defer r.Close()
	if !v.hasDS || r.Len() != v.dense || r.Dim() != v.meta.denseDim() {
		return v.fail("%s holds %d × %d rows but the vector file %d × %d (%v): delete it, the next --hnsw-compressed open writes it again", path, r.Len(), r.Dim(), v.dense, v.meta.denseDim(), v.hasDS)
	}
	return v.wrap(r.Check(), ann.ErrCorrupt)
}

func (v *verifier) checkDenseHeader(h ann.Header) error {
	d := v.meta.Dense
	if h.Dim != d.Dim || h.DType.String() != d.DType || h.EncoderID != d.Model || h.ConfigHash != d.ConfigHash {
		return v.fail("%s: header (%s, %d-d %s, config %#x) does not match meta.json (%s, %d-d %s, config %#x)",
			v.path(DenseFile), h.EncoderID, h.Dim, h.DType, h.ConfigHash, d.Model, d.Dim, d.DType, d.ConfigHash)
	}
	return nil
}

func (v *verifier) checkCounts(ctx context.Context) error {
	n := v.meta.NumDocs
	if v.docs != n || v.bm25 != n || (v.hasDS && v.dense != n) {
		msg := fmt.Sprintf("%s is inconsistent: meta.json says %d passages, %s has %d, %s %d", v.dir, n, DocsFile, v.docs, BM25File, v.bm25)
		if v.hasDS {
			msg += fmt.Sprintf(", %s %d", DenseFile, v.dense)
		}
		return v.fail("%s", msg)
	}
	return nil
}

// denseDim is the vector file's dimension from meta.json, 0 without one.
func (m Meta) denseDim() int {
	if m.Dense == nil {
		return 0
	}
	return m.Dense.Dim
}
