package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/docstore"
)

// ErrSelfCheck is returned by Open when the encoder and the vector file do
// not belong together.
var ErrSelfCheck = errors.New("index: dense self-check failed")

// ErrNonFiniteEmbedding is returned (wrapped, naming the query) by the
// dense retriever when the encoder embeds a query with a NaN or infinite
// value: every score against it would be NaN, and exact search, which never
// ranks a NaN, would answer an empty list instead of an error. It is a model
// fault (a broken export or weights), so servers answer it with a 5xx.
var ErrNonFiniteEmbedding = errors.New("index: encoder returned a NaN or infinite query embedding")

// OpenConfig configures Open.
type OpenConfig struct {
	// Encoder, when non-nil, serves dense ("e5") retrieval over the shard.
	// Without it the index serves BM25 only.
	Encoder rlsearch.Encoder
	// SelfCheckRows is how many stored passages (spread evenly over the
	// rows) must retrieve themselves at rank 1 before dense retrieval is
	// served; 0 means 3, negative disables the check.
	SelfCheckRows int
	// DocCacheBlocks is the docstore's decoded-block cache (0 = default).
	DocCacheBlocks int
	// CheckDocs checks the CRC of every docstore block at open (one read
	// of docs.zst), so a corrupt store is refused before serving.
	CheckDocs bool
	// DenseBackend chooses how the vector file is searched (ann.Open):
	// "auto" (default: GPU when usable, else exact flat up to
	// ann.DefaultFlatMax vectors, else HNSW), "flat", "hnsw" or "gpu". An
	// HNSW graph is cached in the index directory as HNSWFile (or was
	// imported there from a faiss IndexHNSWFlat).
	DenseBackend string
	// HNSWEfSearch, when > 0, is the hnsw backend's candidate list size for
	// searches (raised to k when smaller), instead of the graph's own: 64
	// for a graph built here, the file's efSearch for one imported from
	// faiss (faiss's default is 16, which Search-R1's e5_HNSW64.index keeps
	// unless its builder changed it).
	HNSWEfSearch int
	// GPUInt8 keeps an int8 vector file's codes int8 on the GPU
	// (ann.GPUConfig.Int8: half the GPU memory and HBM traffic of fp16,
	// exact over the int8 vectors up to the fp16 rounding of q∘scale) when
	// DenseBackend may choose the GPU. A shard that is not int8, or whose
	// dimension is not a multiple of 16, is then refused with
	// rlsearch.ErrBadInput, with or without a GPU.
	GPUInt8 bool
	// HNSWCompressed serves the HNSW graph compressed when the hnsw backend
	// is chosen (ann.Config.HNSWCompressed; rlsearch --hnsw-compressed):
	// traversal on int8 codes, the final candidates re-ranked on fp16 rows
	// memory-mapped from FP16RowsFile, written beside the shard on the first
	// such open and reused after (refused with ann.ErrStaleRows or
	// ann.ErrCorrupt when it does not hold this shard's vectors: delete it).
	// Index.Dense is then exact flat search over those fp16 rows, and the
	// shard's own storage is released. The graph (HNSWFile) is the same with
	// or without it.
	HNSWCompressed bool
	// HNSWInt8 traverses the HNSW graph, when the hnsw backend is chosen, on
	// int8 codes fitted over the shard at open and re-ranks the final
	// candidates on the shard's own rows in memory (ann.Config.HNSW.Int8;
	// rlsearch --hnsw-int8): Dim bytes per vector more than the plain graph,
	// scores those of exact search over the shard. HNSWCompressed ignores it.
	HNSWInt8 bool
	// FlatInt8Scan serves exact flat search through an int8 scan of the
	// vector file re-ranked on its own rows (ann.Config.FlatInt8Scan;
	// rlsearch --flat-int8-scan): Dim bytes per vector more; batch 1
	// measured 2.3–8.4× faiss's exact search (ann/README.md).
	FlatInt8Scan bool
	// SkipGPUCanary turns off the GPU search canary that runs before
	// DenseBackend "auto" or "gpu" serves from the GPU
	// (ann.Config.SkipGPUCanary; rlsearch --gpu-canary=false).
	SkipGPUCanary bool
	// BM25Parallel, when > 1, searches each query of a BM25 request that
	// holds fewer queries than this over BM25Parallel row ranges on their
	// own goroutines (bm25.SearchOptions.Parallel): lower latency for small
	// requests on many-core nodes, the same hits. 0 or 1: one goroutine per
	// query (requests of many queries always run one query per core).
	BM25Parallel int
}

// Index is an opened index directory. Read-only and safe for concurrent use.
type Index struct {
	Dir   string
	Meta  Meta
	Docs  *docstore.Store
	BM25  *bm25.Index
	Dense *ann.Flat // nil when the index has no vector file
	// DenseSearch is the backend ann.Open chose over Dense (Backend and
	// Reason say which and why); nil without a vector file.
	DenseSearch *ann.Opened
	// OpenDuration is how long Open took (reading meta.json, the docstore
	// table, the BM25 index, the vector file and its search backend, and
	// the self-check), for startup logs.
	OpenDuration time.Duration
	// URLs holds each passage's "url" (docstore contents; "" for none)
	// when the corpus had any (Meta.URLs); nil otherwise.
	URLs         *docstore.Store
	enc          rlsearch.Encoder // nil without an encoder
	bm25Parallel int
	buildID      string
}

// BuildID identifies this build of the index: the FNV-1a 64 hash of its
// meta.json (which records the corpus, the counts and the build time), in
// hex. A rebuilt index gets another id, so results cached under one build
// are never served for another.
func (ix *Index) BuildID() string { return ix.buildID }

// Open loads the index in dir. With cfg.Encoder set, the index must have a
// vector file of the encoder's dimension, and the self-check must pass
// (errors wrap ErrSelfCheck and say what to do).
func Open(ctx context.Context, dir string, cfg OpenConfig) (*Index, error) {
	start := time.Now()
	raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		if m, merr := ReadManifest(dir); merr == nil {
			return nil, fmt.Errorf("index: %s holds %d shards (%s), not one index: serve each shard directory (--index %s) and route over them (serve --shards URL,...)", dir, len(m.Shards), ManifestFile, filepath.Join(dir, m.Shards[0].Dir))
		}
		return nil, fmt.Errorf("index: %s is not an index directory (build one with `rlsearch index`): %w", dir, err)
	}
	if cfg.BM25Parallel < 0 {
		return nil, fmt.Errorf("index: OpenConfig.BM25Parallel = %d, want >= 0", cfg.BM25Parallel)
	}
	if cfg.HNSWEfSearch < 0 {
		return nil, fmt.Errorf("index: OpenConfig.HNSWEfSearch = %d, want >= 0", cfg.HNSWEfSearch)
	}
	h := fnv.New64a()
	h.Write(raw)
	ix := &Index{Dir: dir, enc: cfg.Encoder, bm25Parallel: cfg.BM25Parallel, buildID: fmt.Sprintf("%016x", h.Sum64())}
	if err := json.Unmarshal(raw, &ix.Meta); err != nil {
		return nil, fmt.Errorf("index: %s: %w", filepath.Join(dir, MetaFile), err)
	}
	if ix.Meta.Version != FormatVersion {
		return nil, fmt.Errorf("index: %s has format version %d, this binary reads %d: rebuild it", dir, ix.Meta.Version, FormatVersion)
	}
	ok := false
	defer func() {
		if !ok {
			ix.Close()
		}
	}()
	if ix.Docs, err = docstore.Open(filepath.Join(dir, DocsFile), cfg.DocCacheBlocks); err != nil {
		return nil, err
	}
	if cfg.CheckDocs {
		if err := ix.Docs.CheckCRC(); err != nil {
			return nil, err
		}
	}
	if ix.Meta.URLs != "" {
		if ix.URLs, err = docstore.Open(filepath.Join(dir, ix.Meta.URLs), 0); err != nil {
			return nil, err
		}
		if ix.URLs.Len() != ix.Meta.NumDocs {
			return nil, fmt.Errorf("index: %s has %d urls for %d passages", filepath.Join(dir, ix.Meta.URLs), ix.URLs.Len(), ix.Meta.NumDocs)
		}
	}
	if ix.BM25, err = bm25.Open(filepath.Join(dir, BM25File)); err != nil {
		return nil, err
	}
	if err := checkBM25Meta(ix.Meta.BM25, ix.BM25); err != nil {
		return nil, fmt.Errorf("index: %s: %w", dir, err)
	}
	if ix.Docs.Len() != ix.Meta.NumDocs || ix.BM25.NumDocs() != ix.Meta.NumDocs {
		return nil, fmt.Errorf("index: %s is inconsistent: meta.json says %d passages, docstore %d, bm25 %d", dir, ix.Meta.NumDocs, ix.Docs.Len(), ix.BM25.NumDocs())
	}
	if err := checkShardMeta(ix.Meta, ix.BM25); err != nil {
		return nil, fmt.Errorf("index: %s: %w", dir, err)
	}
	if ix.Meta.Dense != nil {
		// ann.Open reads the shard itself, so that "auto" can refuse a shard
		// that does not fit in memory (ann.ErrNoMemory) before loading it.
		if ix.DenseSearch, err = ann.Open(ctx, ann.Config{Path: filepath.Join(dir, DenseFile), Backend: cfg.DenseBackend, HNSWPath: filepath.Join(dir, HNSWFile), HNSW: ann.HNSWConfig{EfSearch: cfg.HNSWEfSearch, Int8: cfg.HNSWInt8}, HNSWCompressed: cfg.HNSWCompressed, FlatInt8Scan: cfg.FlatInt8Scan, FP16RowsPath: filepath.Join(dir, FP16RowsFile), GPU: ann.GPUConfig{Int8: cfg.GPUInt8}, SkipGPUCanary: cfg.SkipGPUCanary}); err != nil {
			return nil, fmt.Errorf("index: %s: %w", dir, err)
		}
		ix.Dense = ix.DenseSearch.Flat
		if ix.Dense.Len() != ix.Meta.NumDocs {
			return nil, fmt.Errorf("index: %s: vector file (dense.shard) has %d vectors for %d passages", dir, ix.Dense.Len(), ix.Meta.NumDocs)
		}
	}
	if cfg.Encoder != nil {
		if err := ix.selfCheck(ctx, cfg.SelfCheckRows); err != nil {
			return nil, err
		}
	}
	ok = true
	ix.OpenDuration = time.Since(start)
	return ix, nil
}

// checkBM25Meta compares meta.json's description of the BM25 index with
// the bm25.idx header it describes (the file's k1 and b are the ones that
// score; meta.json only reports them), so an edited or mismatched meta.json
// is refused instead of being shown in /healthz.
func checkBM25Meta(m BM25Meta, bix *bm25.Index) error {
	k1, b := bix.Params()
	if math.Abs(m.K1-round6(k1)) > 1e-6 || math.Abs(m.B-round6(b)) > 1e-6 || m.NumTerms != bix.NumTerms() {
		return fmt.Errorf("%s says bm25 k1=%v b=%v with %d terms, but %s has k1=%v b=%v with %d terms: rebuild the index",
			MetaFile, m.K1, m.B, m.NumTerms, BM25File, round6(k1), round6(b), bix.NumTerms())
	}
	return nil
}

// checkShardMeta compares meta.json's shard (or its absence) with the
// bm25.idx header: a shard directory's BM25 file must be the shard's.
func checkShardMeta(m Meta, bix *bm25.Index) error {
	sh := bix.Shard()
	s := m.Shard
	switch {
	case s == nil && !sh.Sharded:
		return nil
	case s == nil:
		return fmt.Errorf("%s describes a whole corpus but %s is a shard (rows from %d of %d): rebuild the index", MetaFile, BM25File, sh.FirstRow, sh.TotalRows)
	case !sh.Sharded:
		return fmt.Errorf("%s says shard %d of %d but %s indexes a whole corpus: rebuild the shard", MetaFile, s.Index, s.Count, BM25File)
	case s.FirstRow != sh.FirstRow || s.TotalRows != sh.TotalRows || s.Index < 0 || s.Index >= s.Count || s.BuildID == "":
		return fmt.Errorf("%s says shard %d of %d from corpus row %d of %d (build %q) but %s holds rows from %d of %d: rebuild the shard", MetaFile, s.Index, s.Count, s.FirstRow, s.TotalRows, s.BuildID, BM25File, sh.FirstRow, sh.TotalRows)
	}
	return nil
}

func (ix *Index) selfCheck(ctx context.Context, rows int) error {
	enc := ix.enc
	if ix.Dense == nil {
		return fmt.Errorf("%w: model %s was given but %s has no vector file (dense.shard); rebuild the index with the model (rlsearch index --model DIR)", ErrSelfCheck, enc.Name(), ix.Dir)
	}
	h := ix.Dense.Header()
	if enc.Dim() != h.Dim {
		return fmt.Errorf("%w: model %s embeds %d dimensions but the shard in %s holds %d (built with %q); use that model or rebuild the index", ErrSelfCheck, enc.Name(), enc.Dim(), ix.Dir, h.Dim, h.EncoderID)
	}
	if rows < 0 {
		return nil
	}
	if rows == 0 {
		rows = 3
	}
	n := ix.Dense.Len()
	rows = min(rows, n)
	texts := make([]string, rows)
	sample := make([]int32, rows)
	for i := range sample {
		sample[i] = int32(int64(i) * int64(n-1) / int64(max(rows-1, 1)))
		d, err := ix.Docs.Doc(sample[i])
		if err != nil {
			return err
		}
		texts[i] = d.Contents
	}
	vecs, err := enc.EncodePassages(ctx, texts)
	if err != nil {
		return fmt.Errorf("index: self-check encode: %w", err)
	}
	hits, err := ix.Dense.Search(ctx, vecs, 1)
	if err != nil {
		return err
	}
	for i, row := range sample {
		if len(hits[i]) == 0 {
			return fmt.Errorf("%w: passage row %d retrieved nothing", ErrSelfCheck, row)
		}
		top := hits[i][0]
		if top.Row == row {
			continue
		}
		// A duplicate passage stored at a lower row ties with it: accept an
		// exact tie with the stored vector's own score.
		self := dotf(vecs[i*h.Dim:(i+1)*h.Dim], ix.Dense.Vector(int(row)))
		if top.Score-self > 1e-3*max(1, abs32(self)) {
			return fmt.Errorf("%w: stored passage row %d does not retrieve itself at rank 1 (row %d scores %.4f, itself %.4f): the shard in %s was built with %q, not with model %s", ErrSelfCheck, row, top.Row, top.Score, self, ix.Dir, h.EncoderID, enc.Name())
		}
	}
	return nil
}

func dotf(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// Retrievers returns the retrievers this index serves by API name: "bm25"
// always, "e5" when the index has a vector file and an encoder was given.
func (ix *Index) Retrievers() map[string]rlsearch.Retriever {
	m := map[string]rlsearch.Retriever{rlsearch.RetrieverBM25: bm25Retriever{ix: ix.BM25, parallel: ix.bm25Parallel, path: filepath.Join(ix.Dir, BM25File)}}
	if ix.Dense != nil && ix.enc != nil {
		var search ann.Index = ix.Dense
		if ix.DenseSearch != nil {
			search = ix.DenseSearch
		}
		m[rlsearch.RetrieverE5] = NewDenseRetriever(ix.enc, search)
	}
	return m
}

// Encoder returns the encoder given to Open, or nil.
func (ix *Index) Encoder() rlsearch.Encoder { return ix.enc }

// Doc returns the passage at row (see docstore.Store.Doc).
func (ix *Index) Doc(row int32) (rlsearch.Document, error) { return ix.Docs.Doc(row) }

// Len is the number of passages.
func (ix *Index) Len() int { return ix.Meta.NumDocs }

// URL returns the "url" the corpus gave the passage at row, "" when it
// gave none (or the index has no URLs). Safe for concurrent use.
func (ix *Index) URL(row int32) (string, error) {
	if ix.URLs == nil {
		return "", nil
	}
	d, err := ix.URLs.Doc(row)
	return d.Contents, err
}

// Scan calls fn for every passage in row order, one decompression per
// docstore block (docstore.Store.Scan); it stops at fn's first error.
func (ix *Index) Scan(fn func(row int32, d rlsearch.Document) error) error {
	return ix.Docs.Scan(fn)
}

// Close releases the files.
func (ix *Index) Close() error {
	var err error
	if ix.DenseSearch != nil {
		err = ix.DenseSearch.Close()
	}
	if ix.Docs != nil {
		err = errors.Join(err, ix.Docs.Close())
	}
	if ix.URLs != nil {
		err = errors.Join(err, ix.URLs.Close())
	}
	if ix.BM25 != nil {
		err = errors.Join(err, ix.BM25.Close())
	}
	return err
}

type bm25Retriever struct {
	ix       *bm25.Index
	parallel int    // OpenConfig.BM25Parallel
	path     string // for errors: a damaged file is named
}

func (r bm25Retriever) Name() string { return rlsearch.RetrieverBM25 }

// PrefixStable is true: BM25 returns the exact top k in Hit's total order,
// so a top-k list is the first k hits of any wider one.
func (r bm25Retriever) PrefixStable() bool { return true }

func (r bm25Retriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("%w: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
	}
	if r.parallel <= 1 || len(queries) >= r.parallel {
		// (Repeated queries of a /retrieve request are searched once by
		// the server, for every retriever.)
		hits, err := r.ix.SearchBatch(ctx, queries, k)
		if errors.Is(err, bm25.ErrCorrupt) {
			err = fmt.Errorf("%s: %w", r.path, err)
		}
		return hits, err
	}
	out := make([][]rlsearch.Hit, len(queries))
	for i, q := range queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hits, err := r.ix.SearchWith(q, k, bm25.SearchOptions{Parallel: r.parallel})
		if err != nil {
			return nil, fmt.Errorf("%s: bm25: query %d: %w", r.path, i, err)
		}
		out[i] = hits
	}
	return out, nil
}

type denseRetriever struct {
	enc  rlsearch.Encoder
	flat ann.Index
}

// NewDenseRetriever is the "e5" retriever an index serves, over any
// encoder and dense search (an ann.GPUFlat over generated vectors in the
// GPU benchmark, bench/gpu/gpubench): queries embedded with the E5
// "query: " prefix (EncodeQueries), searched, blank queries answered with
// no hits, non-finite embeddings refused (ErrNonFiniteEmbedding). Safe for
// concurrent use when enc and search are.
func NewDenseRetriever(enc rlsearch.Encoder, search ann.Index) rlsearch.Retriever {
	return denseRetriever{enc: enc, flat: search}
}

func (r denseRetriever) Name() string { return rlsearch.RetrieverE5 }

// Retrieve embeds the queries (E5 "query: " prefix) and searches the shard.
// Blank (empty or whitespace-only) queries get an empty list without being
// embedded. A query embedding with a NaN or infinite value fails the call
// with ErrNonFiniteEmbedding naming the query (its index in queries and its
// text).
func (r denseRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("%w: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
	}
	ks := make([]int, len(queries))
	for i := range ks {
		ks[i] = k
	}
	return r.RetrieveWidths(ctx, queries, ks)
}

// PrefixStable reports whether the dense search is exact (ann.Exact: flat
// or GPU flat), whose top-k lists are prefixes of wider ones; HNSW's are
// not.
func (r denseRetriever) PrefixStable() bool { return ann.Exact(r.flat) }

// RetrieveWidths is Retrieve with a width per query (ks[i] for queries[i]):
// all queries embedded in one encoder batch, each searched with its own
// width (ann.SearchWidths), so that every list equals a Retrieve of that
// query alone at that width. Errors: Retrieve's.
func (r denseRetriever) RetrieveWidths(ctx context.Context, queries []string, ks []int) ([][]rlsearch.Hit, error) {
	if len(ks) != len(queries) {
		return nil, fmt.Errorf("%w: %d widths for %d queries", rlsearch.ErrBadInput, len(ks), len(queries))
	}
	for _, k := range ks {
		if k < 0 {
			return nil, fmt.Errorf("%w: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
		}
	}
	out := make([][]rlsearch.Hit, len(queries))
	var texts []string
	var where, widths []int
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			out[i] = []rlsearch.Hit{}
			continue
		}
		texts = append(texts, q)
		where = append(where, i)
		widths = append(widths, ks[i])
	}
	if len(texts) == 0 {
		return out, nil
	}
	vecs, err := r.enc.EncodeQueries(ctx, texts)
	if err != nil {
		return nil, err
	}
	if dim := r.enc.Dim(); dim > 0 && len(vecs) == len(texts)*dim {
		for j := range texts {
			for d, v := range vecs[j*dim : (j+1)*dim] {
				if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, fmt.Errorf("%w: %s embedded queries[%d] %s with %v at dimension %d", ErrNonFiniteEmbedding, r.enc.Name(), where[j], rlsearch.QuoteShort(texts[j]), v, d)
				}
			}
		}
	}
	hits, err := ann.SearchWidths(ctx, r.flat, vecs, widths)
	if err != nil {
		return nil, err
	}
	for j, i := range where {
		out[i] = hits[j]
	}
	return out, nil
}
