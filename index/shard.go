package index

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/internal/progress"
)

// ManifestFile is the manifest of a sharded build, in the directory that
// holds the shard directories.
const ManifestFile = "manifest.json"

// ManifestVersion is the version of the manifest layout.
const ManifestVersion = 1

// ErrShards is wrapped by the errors about a sharded build's layout: bad
// Shards or Only values, a directory that holds another build's shards.
var ErrShards = errors.New("index: bad shard layout")

// ShardDirName is the directory of shard i of n inside a sharded build's
// directory: "shard-I-of-N" (0-based I).
func ShardDirName(i, n int) string { return fmt.Sprintf("shard-%d-of-%d", i, n) }

// ShardMeta is meta.json's "shard": which shard of which build a directory
// is. Two shard directories belong to one build when their BuildID is
// equal; the router refuses shards of different builds.
type ShardMeta struct {
	Index     int `json:"index"`      // 0-based
	Count     int `json:"count"`      // shards in the build
	FirstRow  int `json:"first_row"`  // corpus row of the shard's row 0
	TotalRows int `json:"total_rows"` // indexed passages of the whole corpus
	// BuildID identifies the build (Manifest.BuildID).
	BuildID string `json:"build_id"`
	// CorpusSHA256 is the corpus checksum (Manifest.CorpusSHA256).
	CorpusSHA256 string `json:"corpus_sha256"`
}

// Manifest is manifest.json of a sharded build: the corpus, the split and
// the corpus-wide BM25 statistics every shard scores with.
type Manifest struct {
	Version int `json:"version"`
	// BuildID is the hex SHA-256 of the build's identity (BuildIdentity):
	// the corpus checksum, the rows, the split, the BM25 parameters and
	// statistics and the dense model. Builds of the same corpus with the
	// same flags get the same ID on any machine, so shards built
	// separately (BuildConfig.Only) fit together; any difference gives
	// another ID.
	BuildID string `json:"build_id"`
	// Corpus is the corpus path as given to the build (not part of the
	// identity: machines may mount it elsewhere).
	Corpus string `json:"corpus"`
	BuildIdentity
	Created time.Time `json:"created"`
}

// BuildIdentity is what Manifest.BuildID hashes.
type BuildIdentity struct {
	// CorpusSHA256 is the hex SHA-256 of the indexed passages in corpus
	// order, each as uvarint(len(id)) id uvarint(len(contents)) contents
	// (after the corpus package's parsing: the same for plain, .gz and
	// .zst copies and for {id, title, text} lines that build the same
	// contents). Empty passages, which are not indexed, are not in it.
	CorpusSHA256 string `json:"corpus_sha256"`
	// Rows is the number of indexed passages, Skipped the empty ones.
	Rows    int `json:"rows"`
	Skipped int `json:"skipped_empty"`
	// Shards are the shards in row order.
	Shards []ManifestShard `json:"shards"`
	BM25   ManifestBM25    `json:"bm25"`
	// Dense is the vector file's model, nil without one. For imported
	// vectors the identity is the model name and the file's kind and
	// count, not its bytes.
	Dense *DenseIdentity `json:"dense"`
}

// ManifestShard is one shard of a manifest.
type ManifestShard struct {
	Index    int    `json:"index"`
	Dir      string `json:"dir"` // relative to the manifest's directory
	FirstRow int    `json:"first_row"`
	Rows     int    `json:"rows"`
}

// ManifestBM25 holds the BM25 parameters and the corpus-wide statistics.
type ManifestBM25 struct {
	K1        float64 `json:"k1"`
	B         float64 `json:"b"`
	DocCount  int     `json:"doc_count"` // passages with at least one term
	SumTF     uint64  `json:"sum_tf"`    // terms in the corpus
	AvgDocLen float64 `json:"avg_doc_len"`
}

// DenseIdentity is the dense part of a build's identity.
type DenseIdentity struct {
	Model      string `json:"model"`
	Dim        int    `json:"dim"`
	DType      string `json:"dtype"`
	ConfigHash uint64 `json:"config_hash"`
	// Imported is the vector file's kind and rows, when imported.
	Imported string `json:"imported,omitempty"`
}

// ID is the hex SHA-256 of the identity's JSON.
func (id BuildIdentity) ID() string {
	b, _ := json.Marshal(id) // plain struct: cannot fail
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ReadManifest reads and checks dir/manifest.json: its version, the shard
// list (in order, contiguous, covering Rows) and that BuildID matches the
// identity.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("index: %s: %w", path, err)
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("index: %s has version %d, this binary reads %d", path, m.Version, ManifestVersion)
	}
	next := 0
	for i, s := range m.Shards {
		if s.Index != i || s.FirstRow != next || s.Rows < 1 || s.Dir != ShardDirName(i, len(m.Shards)) {
			return nil, fmt.Errorf("%w: %s: shard %d (%+v) does not follow its predecessors (want index %d from row %d in %s)", ErrShards, path, i, s, i, next, ShardDirName(i, len(m.Shards)))
		}
		next += s.Rows
	}
	if len(m.Shards) == 0 || next != m.Rows {
		return nil, fmt.Errorf("%w: %s: %d shards cover %d rows of %d", ErrShards, path, len(m.Shards), next, m.Rows)
	}
	if id := m.BuildIdentity.ID(); id != m.BuildID {
		return nil, fmt.Errorf("%w: %s: build_id %s does not match its content (%s): the file was edited", ErrShards, path, m.BuildID, id)
	}
	return &m, nil
}

// corpusHasher computes Manifest.CorpusSHA256.
type corpusHasher struct {
	h   hash.Hash
	buf []byte
}

func newCorpusHasher() *corpusHasher { return &corpusHasher{h: sha256.New()} }

func (c *corpusHasher) add(d rlsearch.Document) {
	c.buf = binary.AppendUvarint(c.buf[:0], uint64(len(d.ID)))
	c.buf = append(c.buf, d.ID...)
	c.buf = binary.AppendUvarint(c.buf, uint64(len(d.Contents)))
	c.h.Write(c.buf)
	io.WriteString(c.h, d.Contents)
}

func (c *corpusHasher) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// countRows reads the corpus once and returns its indexed and skipped
// passages (the split needs the total before the build starts).
func countRows(ctx context.Context, path string, out io.Writer) (rows, skipped int, err error) {
	rd, err := corpus.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer rd.Close()
	var total int64 = -1
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	bar := progress.NewPass(out, total, "counting passages")
	defer bar.Finish()
	for {
		if rows%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
			bar.Update(rd.BytesRead(), rows)
		}
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		rows++
	}
	bar.Update(rd.BytesRead(), rows)
	return rows, rd.Skipped(), nil
}

// BuildShards builds cfg.Corpus as cfg.Shards shard directories of Dir,
// Dir/shard-I-of-N (ShardDirName), and writes Dir/manifest.json. The
// passages are split into contiguous row ranges of equal size (±1,
// bm25.EvenBounds); each shard directory is a complete index of its rows
// (docstore, BM25 and the vector file when an encoder or vectors are
// given), whose meta.json names the shard (Meta.Shard). BM25 shards
// score with the corpus-wide statistics, so merged results equal one
// index's bit for bit (see package bm25, Shards); their vector files hold the
// same rows of the vectors.
//
// With cfg.Only, only those shards are built, so that shard i can be built
// on its own machine: the whole corpus is still read (BM25 statistics, the
// checksum) but only shard i's passages are stored, embedded and indexed.
// Each machine writes the same manifest (BuildID is a function of the
// corpus and the flags), so the directories fit together wherever they
// are built. The corpus is read twice: once to count its passages (the
// split), once to build.
//
// Each shard directory is built in a temporary sibling under a lock and
// renamed into place when complete, as Build does; existing shard
// directories are replaced only with cfg.Force, and a Dir whose manifest
// names another build is refused without it. Errors: ErrShards, and those
// of Build.
func BuildShards(ctx context.Context, cfg BuildConfig) (*Manifest, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.Shards
	if n < 1 {
		return nil, fmt.Errorf("%w: BuildConfig.Shards = %d, want 1 to %d (--shards)", ErrShards, n, bm25.MaxShards)
	}
	keep := make([]bool, n)
	for _, i := range cfg.Only {
		keep[i] = true // in range: Validate
	}
	if len(cfg.Only) == 0 {
		for i := range keep {
			keep[i] = true
		}
	}
	start := time.Now()
	if _, err := os.Stat(filepath.Join(cfg.Dir, MetaFile)); err == nil {
		return nil, fmt.Errorf("%w: %s is an index of a whole corpus, not a directory of shards; choose another --out", ErrShards, cfg.Dir)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	for i := range n {
		if keep[i] {
			if err := checkReplace(filepath.Join(cfg.Dir, ShardDirName(i, n)), cfg.Force); err != nil {
				return nil, err
			}
		}
	}
	rows, _, err := countRows(ctx, cfg.Corpus, cfg.Progress)
	if err != nil {
		return nil, err
	}
	if rows < n {
		return nil, fmt.Errorf("%w: %s has %d passages, fewer than the %d shards", ErrShards, cfg.Corpus, rows, n)
	}
	bounds, err := bm25.EvenBounds(rows, n)
	if err != nil {
		return nil, err
	}
	plan := &bm25.ShardPlan{Bounds: bounds, Keep: keep}
	var parts []*part
	var locks []*buildLock
	published := false
	defer func() {
		for _, l := range locks {
			if !published {
				os.RemoveAll(l.tmp)
			}
			l.release()
		}
	}()
	for i := range n {
		if !keep[i] {
			continue
		}
		base := ShardDirName(i, n)
		if err := cleanStale(cfg.Dir, base, cfg.Log); err != nil && cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%v (continuing)\n", err)
		}
		l, err := acquireBuild(cfg.Dir, base)
		if err != nil {
			return nil, err
		}
		locks = append(locks, l)
		parts = append(parts, &part{dir: l.tmp, lo: int(bounds[i]), hi: int(bounds[i+1])})
	}
	var total int64 = -1
	if st, err := os.Stat(cfg.Corpus); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	bar := progress.NewPass(cfg.Progress, total, "indexing")
	defer bar.Finish()
	res, err := buildParts(ctx, cfg, parts, plan, bar)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Version: ManifestVersion, Corpus: cfg.Corpus, Created: time.Now().UTC()}
	id := &m.BuildIdentity
	id.CorpusSHA256, id.Rows, id.Skipped = res.sha256, res.rows, res.skipped
	for i := range n {
		id.Shards = append(id.Shards, ManifestShard{Index: i, Dir: ShardDirName(i, n), FirstRow: int(bounds[i]), Rows: int(bounds[i+1] - bounds[i])})
	}
	bm := parts[0].meta.BM25
	id.BM25 = ManifestBM25{K1: bm.K1, B: bm.B, DocCount: bm.CorpusDocCount, SumTF: bm.CorpusSumTF, AvgDocLen: bm.AvgDocLen}
	if d := parts[0].meta.Dense; d != nil {
		id.Dense = &DenseIdentity{Model: d.Model, Dim: d.Dim, DType: d.DType, ConfigHash: d.ConfigHash}
		if cfg.Vectors != "" {
			id.Dense.Imported = fmt.Sprintf("%d rows", res.rows)
		}
	}
	m.BuildID = id.ID()
	if old, err := ReadManifest(cfg.Dir); err == nil && old.BuildID != m.BuildID && !cfg.Force {
		return nil, fmt.Errorf("%w: %s holds the shards of build %s (corpus %s, %d shards); this build is %s: use another --out, or --force to replace the manifest", ErrShards, cfg.Dir, old.BuildID, old.CorpusSHA256, len(old.Shards), m.BuildID)
	}
	bar.Phase("writing "+MetaFile+" and publishing the shards", true)
	for _, p := range parts {
		i := shardOf(plan, p.lo)
		p.meta.Shard = &ShardMeta{Index: i, Count: n, FirstRow: p.lo, TotalRows: res.rows, BuildID: m.BuildID, CorpusSHA256: res.sha256}
		p.meta.BuildSeconds = time.Since(start).Seconds()
		if err := writeJSON(filepath.Join(p.dir, MetaFile), p.meta); err != nil {
			return nil, err
		}
		if err := publishModes(p.dir); err != nil {
			return nil, err
		}
	}
	for _, p := range parts {
		dst := filepath.Join(cfg.Dir, ShardDirName(shardOf(plan, p.lo), n))
		if err := checkReplace(dst, cfg.Force); err != nil {
			return nil, err
		}
		if err := replaceDir(p.dir, dst); err != nil {
			return nil, err
		}
	}
	published = true
	if err := writeJSON(filepath.Join(cfg.Dir, ManifestFile), m); err != nil {
		return nil, err
	}
	return m, nil
}

// Summary is a one-line report of a sharded build.
func (m *Manifest) Summary(dir string, built []int, seconds float64) string {
	s := fmt.Sprintf("indexed %d passages (%d empty skipped) as %d shards into %s in %.1fs; built shards %v; build %s", m.Rows, m.Skipped, len(m.Shards), dir, seconds, built, m.BuildID[:16])
	if m.Dense != nil {
		s += fmt.Sprintf("; dense %s %d-d %s", m.Dense.Model, m.Dense.Dim, m.Dense.DType)
	}
	return s
}

// CheckShards verifies the shard directories of a sharded build in dir:
// the manifest (ReadManifest), then every shard directory present with
// Check and against the manifest (its build, rows and position). A
// directory built with BuildConfig.Only holds only some shards; the
// present ones are verified and counted in the returned number. Errors
// wrap ErrShards or ErrCheck and name the directory.
func CheckShards(ctx context.Context, dir string, cfg CheckConfig) (present int, err error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return 0, err
	}
	for _, s := range m.Shards {
		sd := filepath.Join(dir, s.Dir)
		if _, err := os.Stat(sd); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "check: %s (shard %d of %d)\n", sd, s.Index, len(m.Shards))
		}
		if err := Check(ctx, sd, cfg); err != nil {
			return present, err
		}
		raw, err := os.ReadFile(filepath.Join(sd, MetaFile))
		if err != nil {
			return present, fmt.Errorf("index: %w", err)
		}
		var meta Meta
		if err := json.Unmarshal(raw, &meta); err != nil {
			return present, fmt.Errorf("%w: %s: %v", ErrCheck, filepath.Join(sd, MetaFile), err)
		}
		if sh := meta.Shard; sh == nil || sh.BuildID != m.BuildID || sh.Index != s.Index || sh.FirstRow != s.FirstRow || meta.NumDocs != s.Rows {
			return present, fmt.Errorf("%w: %s is not shard %d of build %s (rows from %d, %d rows): its %s says %+v with %d rows", ErrShards, sd, s.Index, m.BuildID, s.FirstRow, s.Rows, MetaFile, sh, meta.NumDocs)
		}
		present++
	}
	if present == 0 {
		return 0, fmt.Errorf("%w: %s: none of the %d shard directories of its %s is there", ErrShards, dir, len(m.Shards), ManifestFile)
	}
	return present, nil
}
