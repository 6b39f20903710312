package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/cache"
	"github.com/rlsearch/rlsearch/server/router"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// ErrConfig marks a Config the assembly cannot serve (a usage error).
var ErrConfig = errors.New("app: bad configuration")

// IndexConfig locates an index and the model that serves its vector file.
type IndexConfig struct {
	Dir string // index directory built by `rlsearch index`; required
	// Model is the E5 encoder (Model.Dir "" = BM25 only).
	Model embed.Config
	// CheckDocs, DenseBackend, GPUInt8, SkipGPUCanary, HNSWEfSearch,
	// HNSWCompressed, HNSWInt8, FlatInt8Scan and BM25Parallel are
	// index.OpenConfig's.
	CheckDocs      bool
	DenseBackend   string
	GPUInt8        bool
	SkipGPUCanary  bool
	HNSWEfSearch   int
	HNSWCompressed bool
	HNSWInt8       bool
	FlatInt8Scan   bool
	BM25Parallel   int
	// SkipSelfCheck turns off the dense self-check at open
	// (index.OpenConfig.SelfCheckRows -1; rlsearch --self-check=false).
	SkipSelfCheck bool
}

// openConfig is the index.OpenConfig of cfg with enc as the encoder (nil:
// BM25 only); every place that opens an index from an IndexConfig uses it.
func (cfg IndexConfig) openConfig(enc rlsearch.Encoder) index.OpenConfig {
	oc := index.OpenConfig{Encoder: enc, CheckDocs: cfg.CheckDocs, DenseBackend: cfg.DenseBackend, GPUInt8: cfg.GPUInt8,
		SkipGPUCanary: cfg.SkipGPUCanary, HNSWEfSearch: cfg.HNSWEfSearch, HNSWCompressed: cfg.HNSWCompressed, HNSWInt8: cfg.HNSWInt8, FlatInt8Scan: cfg.FlatInt8Scan, BM25Parallel: cfg.BM25Parallel}
	if cfg.SkipSelfCheck {
		oc.SelfCheckRows = -1
	}
	return oc
}

// RerankConfig is the reranker behind POST /rerank and rerank() in
// programs. Model.Dir "" means none: /rerank is not mounted and rerank()
// answers "unavailable". Model.ORTLib "" means the encoder's (New,
// OpenRuntime): one ONNX Runtime per process.
type RerankConfig struct {
	Model rerank.Config
	// Check runs rerank.Check at open: a relevant passage must score above
	// irrelevant ones (off for random-weight test models).
	Check bool
	// Service holds /rerank's per-request limits and default rerank_topk.
	Service rerank.ServiceConfig
	// MaxBodyBytes bounds a /rerank body (0 = server's default).
	MaxBodyBytes int64
}

// Config is everything New assembles. Zero fields take the defaults of
// the packages they come from.
type Config struct {
	Index    IndexConfig
	Reranker RerankConfig
	// Server carries the /retrieve limits; New sets Retrievers, Docs,
	// Health, Logger, Default and Extra.
	Server server.Config
	// Retriever is the default retriever ("" = the index's: e5 with a
	// model, else bm25).
	Retriever string
	// BatchMax and BatchWait configure the e5 batching queue
	// (server.NewBatcher): most queries merged into one encoder call, and
	// how long a batch waits to fill.
	BatchMax  int
	BatchWait time.Duration
	// Collections is a hybrid collection directory or a directory of them
	// for POST /v1/hybrid/execute ("" = none).
	Collections string
	// PolicyTokenizer is the policy's tokenizer.json (Qwen3 byte-level
	// BPE) counting the programs' observation tokens ("" =
	// sdk.BoundTokens).
	PolicyTokenizer string
	// Budgets bound each program (zero fields = sdk defaults).
	Budgets sdk.Budgets
	// Reward configures POST /v1/rewards/*; New sets
	// ProRetrieval.Executor to the collections when any are loaded.
	Reward reward.Options
	// CacheBytes bounds the result cache shared by /retrieve, programs,
	// mutate and the retrieval reward (package server/cache), in bytes; 0
	// means cache.DefaultMaxBytes (256 MiB), rlsearch.Off (negative) no
	// cache (`rlsearch serve --cache-bytes off`).
	CacheBytes int64
	// CacheLoad is a result-cache file (cache.Cache.SaveFile, `rlsearch
	// serve --cache-load`) loaded at start: refused, failing New, when it
	// was saved under another fingerprint; a missing file is a cold start.
	CacheLoad string
	// UI configures the rollout inspector at /ui/.
	UI UIConfig
	// PagesAtStart builds the page index (server.WarmPages: documents by
	// id for MCP get_document, pages by title and URL for /access) in the
	// background at start instead of on first use.
	PagesAtStart bool
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger

	// corpus, set by NewMulti, is /healthz's "corpus": the corpus's name,
	// the process's corpora and what it cost to start.
	corpus map[string]any
}

// Service is an assembled server and what it was built over (Index for
// New, Router for NewRouter). It is safe for concurrent use as
// *server.Server is; Close once, after serving.
type Service struct {
	*server.Server
	Index  *index.Index
	Router *router.Router
	// Cache is the result cache (nil when Config.CacheBytes is rlsearch.Off, and for
	// a router, whose shard servers cache their own results).
	Cache *cache.Cache
	// Fingerprint identifies what produces the answers (zero for a
	// router): sent on every answer in server.FingerprintHeader.
	Fingerprint Fingerprint
	closers     []func()
}

// SaveCache writes the result cache to path atomically (cache file
// format: server/cache/file.go), keyed by the service's fingerprint.
// Errors: no cache (CacheBytes rlsearch.Off), the write's.
func (s *Service) SaveCache(path string) error {
	if s.Cache == nil {
		return fmt.Errorf("%w: --cache-save %s with the cache off (--cache-bytes off)", ErrConfig, path)
	}
	return s.Cache.SaveFile(path)
}

// Close releases everything New opened, in reverse order.
//
// Close first waits (up to server.DefaultShutdownTimeout) for every
// handler of the server to return; if some are still running it closes
// nothing and logs how many, so no index is unmapped under a running
// handler (the process is exiting: the OS reclaims it).
func (s *Service) Close() {
	if s.Server != nil && !s.Server.Drain(server.DefaultShutdownTimeout) {
		slog.Default().Error("app: not closing the index: handlers still running", "handlers", s.Server.Busy())
		s.closers = nil
		return
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// New opens the index, its e5 batching queue, the reranker, the policy
// tokenizer and the collections of cfg and builds the server with every
// endpoint; an index that is one shard of a sharded build also serves the
// shard endpoints a router calls (router.ShardService). Errors: ErrConfig
// (wrapped) for a bad default retriever or /rerank body limit, else those
// of the packages that open the parts.
func New(ctx context.Context, cfg Config) (_ *Service, err error) {
	s := &Service{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ix, closeIx, err := OpenIndex(ctx, cfg.Index)
	if err != nil {
		return nil, err
	}
	s.Index, s.closers = ix, append(s.closers, closeIx)
	sh, closeShared, err := openShared(ctx, cfg, ix.Encoder(), cmp.Or(cfg.Logger, slog.Default()))
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeShared)
	if err := s.serveIndex(ctx, cfg, sh); err != nil {
		return nil, err
	}
	return s, nil
}

// serveIndex builds the service over s.Index with the shared parts sh.
func (s *Service) serveIndex(ctx context.Context, cfg Config, sh *shared) (err error) {
	logger := cmp.Or(cfg.Logger, slog.Default())
	ix := s.Index
	b := backend{retrievers: ix.Retrievers(), docs: ix, health: ix.Health, ix: ix, defaultRetriever: ix.DefaultRetriever(), names: ix.RetrieverNames()}
	if e5, ok := b.retrievers[rlsearch.RetrieverE5]; ok {
		bt := server.NewBatcher(e5, cfg.BatchMax, cfg.BatchWait)
		b.retrievers[rlsearch.RetrieverE5] = bt
		s.closers = append(s.closers, func() { bt.(io.Closer).Close() })
	}
	rrName := ""
	if sh.rr != nil {
		rrName = sh.rr.Name()
	}
	if s.Fingerprint, err = NewFingerprint(ix, cfg.Index.Model, rrName); err != nil {
		return err
	}
	cfg.Server.Fingerprint, cfg.Server.FingerprintInfo = s.Fingerprint.String(), s.Fingerprint
	logger.Info("fingerprint", "fingerprint", cfg.Server.Fingerprint)
	if s.Cache, err = wrapCache(b.retrievers, cfg.CacheBytes, ix.BuildID(), cfg.Server.Fingerprint); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.CacheLoad != "" {
		if s.Cache == nil {
			return fmt.Errorf("%w: --cache-load %s with the cache off (--cache-bytes off)", ErrConfig, cfg.CacheLoad)
		}
		switch n, err := s.Cache.LoadFile(cfg.CacheLoad, ix.Len()); {
		case errors.Is(err, os.ErrNotExist):
			logger.Info("result cache file not found: starting cold", "file", cfg.CacheLoad)
		case err != nil:
			return fmt.Errorf("--cache-load: %w", err)
		default:
			logger.Info("result cache loaded", "file", cfg.CacheLoad, "entries", n, "fingerprint", cfg.Server.Fingerprint)
		}
	}
	if s.Cache != nil {
		b.collectors = append(b.collectors, s.Cache)
		b.health = func() map[string]any {
			h := ix.Health()
			st := s.Cache.Stats()
			h["cache"] = map[string]any{"max_bytes": st.MaxBytes, "bytes": st.Bytes, "entries": st.Entries, "hit_ratio": st.HitRatio(), "evictions": st.Evictions}
			return h
		}
		logger.Info("result cache", "max_bytes", s.Cache.Stats().MaxBytes, "build_id", ix.BuildID())
	}
	if info := cfg.corpus; info != nil {
		base := b.health
		b.health = func() map[string]any {
			h := base()
			h["corpus"] = info
			return h
		}
	}
	if _, ok := b.retrievers[rlsearch.RetrieverE5]; !ok && ix.Dense != nil {
		// A trainer never names the retriever: without this line a
		// forgotten --model would train on BM25 silently.
		why := "the index has a vector file (dense.shard) but serve was started without --model (the E5 query encoder)"
		b.unserved = map[string]string{rlsearch.RetrieverE5: why}
		logger.Warn("dense retrieval not served: "+why+"; /retrieve uses bm25", "index", ix.Dir, "dense_vectors", ix.Dense.Header().Count)
	}
	if shard := ix.Meta.Shard; shard != nil {
		svc, err := router.NewShardService(router.ShardConfig{Retrievers: b.retrievers, Docs: ix, MaxQueries: cfg.Server.MaxQueries, MaxTopK: cfg.Server.MaxTopK, MaxResults: cfg.Server.MaxResults,
			Shard: router.Identity{Index: shard.Index, Count: shard.Count, FirstRow: shard.FirstRow, Rows: ix.Len(), TotalRows: shard.TotalRows, BuildID: shard.BuildID, CorpusSHA256: shard.CorpusSHA256}})
		if err != nil {
			return err
		}
		b.extra = svc.Endpoints()
		logger.Info("serving a shard", "index", ix.Dir, "shard", shard.Index, "of", shard.Count, "first_row", shard.FirstRow, "rows", ix.Len(), "build", shard.BuildID)
	}
	return s.assemble(ctx, cfg, b, sh, logger)
}

// backend is what a Service serves its endpoints over: an index, or a
// router over the shard servers of one.
type backend struct {
	retrievers       map[string]rlsearch.Retriever
	docs             server.DocSource
	health           func() map[string]any
	ix               *index.Index // nil for a router: hybrid queries then have no encoder
	defaultRetriever string
	names            []string
	unserved         map[string]string
	extra            map[string]server.Endpoint // mounted beside the others (shard endpoints)
	collectors       []prometheus.Collector     // registered with the server's metrics (the cache)
}

// assemble builds every endpoint over b and the shared parts sh, and the
// server; what it opens is appended to s.closers.
func (s *Service) assemble(ctx context.Context, cfg Config, b backend, sh *shared, logger *slog.Logger) error {
	sc := cfg.Server
	sc.Retrievers, sc.Docs, sc.Health, sc.Logger, sc.Unserved = b.retrievers, b.docs, b.health, logger, b.unserved
	sc.Collectors = append(sc.Collectors, b.collectors...)
	sc.Default = cmp.Or(cfg.Retriever, b.defaultRetriever)
	if _, ok := sc.Retrievers[sc.Default]; !ok {
		return fmt.Errorf("%w: --retriever %q is not served by this index (have %v; e5 needs --model)", ErrConfig, sc.Default, b.names)
	}
	m := map[string]server.Endpoint{}
	for p, ep := range b.extra {
		m[p] = ep
	}
	m["/v1/hybrid/execute"] = sh.hybrid
	ro := cfg.Reward
	if sh.exec != nil { // else keep the caller's
		ro.ProRetrieval.Executor = sh.exec
	}
	// The retrieval reward searches what /retrieve serves, cache included.
	ro.Retrieval.Searcher = NewSearcher(sc.Retrievers, b.docs, sc.Default)
	if err := AddRewards(m, ro); err != nil {
		return err
	}
	// Programs search through the same retrievers as /retrieve, so their
	// e5 calls join the cross-request batches too.
	rt, err := newRuntime(b.docs, sc.Retrievers, sh, cfg.Budgets)
	if err != nil {
		return err
	}
	if err := AddPrograms(m, rt); err != nil {
		return err
	}
	if sh.rr != nil {
		if err := AddRerank(m, sh.rr, cfg.Reranker); err != nil {
			return err
		}
		sc.Reranker = sh.rr // StepSearch's /retrieve/rerank
	}
	sc.Tokens = rt.Config().Tokens // /access's max_tokens counts as observations do
	sc.Extra, sc.Pages = m, map[string]http.Handler{}
	closeUI, err := AddUI(ctx, sc.Pages, cfg.UI, rt, ro, logger)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, closeUI)
	if err := s.addMCP(sc.Pages, rt); err != nil {
		return err
	}
	sc.Health = healthWithModels(sc.Health, b.ix, sh.rr, logger)
	if s.Server, err = server.New(sc); err != nil {
		return err
	}
	if cfg.PagesAtStart {
		s.Server.WarmPages()
	}
	return nil
}

// RouterConfig is what NewRouter assembles: the router over the shard
// servers, and the endpoints (as in Config) served over it. The
// reranker, the collections and the policy tokenizer are the router's own.
type RouterConfig struct {
	Router router.Config
	// The fields below are Config's; Config.Index, BatchMax and BatchWait
	// have no meaning for a router.
	Reranker        RerankConfig
	Server          server.Config
	Retriever       string
	Collections     string
	PolicyTokenizer string
	Budgets         sdk.Budgets
	Reward          reward.Options
	UI              UIConfig
	Logger          *slog.Logger
}

// NewRouter starts a router over the shard servers of cfg.Router (see
// router.New: it waits until every shard has a live replica) and builds
// the server with every endpoint of New over it: /retrieve, programs and
// mutate fan out to the shards and merge, so that their answers are those
// of one server over the unsharded index; rewards, /rerank (with
// --reranker) and hybrid collections run in the router. GET /healthz adds
// the router's view of every shard and replica, GET /metrics the
// rlsearch_router_* metrics. Errors: router.New's, and those of New.
func NewRouter(ctx context.Context, cfg RouterConfig) (_ *Service, err error) {
	s := &Service{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	logger := cmp.Or(cfg.Logger, slog.Default())
	reg := cfg.Server.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		if err := reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, err
		}
		if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, err
		}
	}
	rc := cfg.Router
	rc.Registry, rc.Logger = reg, cmp.Or(rc.Logger, logger)
	rtr, err := router.New(ctx, rc)
	if err != nil {
		return nil, err
	}
	s.Router, s.closers = rtr, append(s.closers, rtr.Close)
	rs := rtr.Retrievers()
	names := slices.Sorted(maps.Keys(rs))
	def := rlsearch.RetrieverBM25
	if _, ok := rs[rlsearch.RetrieverE5]; ok {
		def = rlsearch.RetrieverE5 // as an index served with --model
	}
	sc := cfg.Server
	sc.Registry = reg
	// The router's documents live on the shard servers: no page index
	// over them (/access and get_document answer 404 saying so).
	sc.NoPageIndex = true
	b := backend{retrievers: rs, docs: rtr.Docs(), health: rtr.Health, defaultRetriever: def, names: names}
	c := Config{Reranker: cfg.Reranker, Server: sc, Retriever: cfg.Retriever, Collections: cfg.Collections,
		PolicyTokenizer: cfg.PolicyTokenizer, Budgets: cfg.Budgets, Reward: cfg.Reward, UI: cfg.UI}
	sh, closeShared, err := openShared(ctx, c, nil, logger)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeShared)
	if err := s.assemble(ctx, c, b, sh, logger); err != nil {
		return nil, err
	}
	return s, nil
}

// wrapCache puts the retrievers of m behind one result cache of maxBytes
// (0: cache.DefaultMaxBytes; none when rlsearch.Off): BM25 keyed by its analysed query (bm25.QueryKey), every
// other retriever by the exact query text.
func wrapCache(m map[string]rlsearch.Retriever, maxBytes int64, buildID, fingerprint string) (*cache.Cache, error) {
	c, err := cache.New(cache.Config{MaxBytes: maxBytes, BuildID: buildID, Fingerprint: fingerprint})
	if err != nil || c == nil {
		return nil, err
	}
	for name, r := range m {
		var key func(string) string
		if name == "bm25" {
			key = bm25.QueryKey
		}
		m[name] = c.Wrap(r, key)
	}
	return c, nil
}

// OpenEncoder loads the encoder of cfg and the hash of its configuration
// (embed.ConfigHash). Without a model (cfg.Dir "") it returns a nil
// interface, never a nil *embed.Encoder, so that it can be stored in a
// Config's Encoder field as it is. The closer releases the encoder (a
// no-op without one).
func OpenEncoder(cfg embed.Config) (rlsearch.Encoder, uint64, func(), error) {
	if cfg.Dir == "" {
		return nil, 0, func() {}, nil
	}
	enc, err := embed.Open(cfg)
	if err != nil {
		return nil, 0, nil, err
	}
	h, err := embed.ConfigHash(cfg.Dir)
	if err != nil {
		enc.Close()
		return nil, 0, nil, err
	}
	return enc, h, func() { enc.Close() }, nil
}

// OpenWith opens model's encoder (OpenEncoder) and what open opens with
// it. The closer releases both; on error nothing stays open.
func OpenWith[T interface{ Close() error }](model embed.Config, open func(enc rlsearch.Encoder) (T, error)) (T, func(), error) {
	var zero T
	enc, _, closeEnc, err := OpenEncoder(model)
	if err != nil {
		return zero, nil, err
	}
	v, err := open(enc)
	if err != nil {
		closeEnc()
		return zero, nil, err
	}
	return v, func() { v.Close(); closeEnc() }, nil
}

// OpenIndex opens the index of cfg with its encoder; the closer releases
// both. Errors: ErrConfig without a directory or with a negative
// BM25Parallel, else index.Open's and the encoder's.
func OpenIndex(ctx context.Context, cfg IndexConfig) (*index.Index, func(), error) {
	if cfg.Dir == "" {
		return nil, nil, fmt.Errorf("%w: --index is required", ErrConfig)
	}
	if cfg.BM25Parallel < 0 {
		return nil, nil, fmt.Errorf("%w: --bm25-parallel %d: want >= 0", ErrConfig, cfg.BM25Parallel)
	}
	return OpenWith(cfg.Model, func(enc rlsearch.Encoder) (*index.Index, error) {
		return index.Open(ctx, cfg.Dir, cfg.openConfig(enc))
	})
}

// OpenReranker loads the reranker of cfg (nil when cfg.Model.Dir is "")
// and runs rerank.Check when cfg.Check is set.
func OpenReranker(ctx context.Context, cfg RerankConfig) (*rerank.Reranker, error) {
	if cfg.Model.Dir == "" {
		return nil, nil
	}
	r, err := rerank.Open(cfg.Model)
	if err != nil {
		return nil, err
	}
	if cfg.Check {
		if err := rerank.Check(ctx, r); err != nil {
			r.Close()
			return nil, fmt.Errorf("%w (start with --rerank-check=false to serve a test model anyway)", err)
		}
	}
	return r, nil
}

// RuntimeConfig is a program runtime's index and models (`rlsearch
// programs` and `rlsearch mutate`).
type RuntimeConfig struct {
	Index           IndexConfig
	Reranker        RerankConfig
	PolicyTokenizer string // "" = sdk.BoundTokens
	Budgets         sdk.Budgets
}

// OpenRuntime opens the index, the reranker and the policy tokenizer of
// cfg and returns a program runtime over them; the closer releases
// everything, and on error nothing stays open.
func OpenRuntime(ctx context.Context, cfg RuntimeConfig) (*sdk.Runtime, func(), error) {
	ix, closeIx, err := OpenIndex(ctx, cfg.Index)
	if err != nil {
		return nil, nil, err
	}
	cfg.Reranker.Model.ORTLib = cmp.Or(cfg.Reranker.Model.ORTLib, cfg.Index.Model.ORTLib)
	rt, _, closeRT, err := runtimeOver(ctx, ix, ix.Retrievers(), cfg.Reranker, cfg.PolicyTokenizer, cfg.Budgets)
	if err != nil {
		closeIx()
		return nil, nil, err
	}
	return rt, func() { closeRT(); closeIx() }, nil
}

// runtimeOver opens the reranker and the policy tokenizer and returns the
// program runtime over docs and retrievers with them, and the reranker
// (nil without one).
func runtimeOver(ctx context.Context, docs sdk.Corpus, retrievers map[string]rlsearch.Retriever, rc RerankConfig, policyTok string, b sdk.Budgets) (*sdk.Runtime, *rerank.Reranker, func(), error) {
	m, closer, err := openModels(ctx, rc, policyTok)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := newRuntime(docs, retrievers, &shared{models: m}, b)
	if err != nil {
		closer()
		return nil, nil, nil, err
	}
	return rt, m.rr, closer, nil
}

// models are the models besides the query encoder that every corpus of a
// process shares: the reranker (nil without --reranker) and the policy
// tokenizer counting observation tokens (nil: sdk.BoundTokens).
type models struct {
	rr     *rerank.Reranker
	tokens rlsearch.TokenCounter
}

// openModels opens the reranker of rc and the policy tokenizer; the closer
// releases them, and on error nothing stays open.
func openModels(ctx context.Context, rc RerankConfig, policyTok string) (*models, func(), error) {
	rr, err := OpenReranker(ctx, rc)
	if err != nil {
		return nil, nil, err
	}
	m, closer := &models{rr: rr}, func() {}
	if rr != nil {
		closer = func() { rr.Close() }
	}
	if policyTok != "" {
		bpe, err := tokenizer.LoadBPE(policyTok)
		if err != nil {
			closer()
			return nil, nil, err
		}
		m.tokens = bpe
	}
	return m, closer, nil
}

// shared is what the services of one process share: the models and the
// hybrid collections (opened once by openShared; NewMulti passes one to
// every corpus).
type shared struct {
	*models
	hybrid server.Endpoint       // POST /v1/hybrid/execute
	exec   reward.HybridExecutor // the collections for the ProRetrieval reward; nil without any
}

// openShared opens cfg's reranker, policy tokenizer and hybrid
// collections (e5 text fields embedded with enc, which may be nil); the
// closer releases them, and on error nothing stays open.
func openShared(ctx context.Context, cfg Config, enc rlsearch.Encoder, logger *slog.Logger) (*shared, func(), error) {
	if cfg.Reranker.MaxBodyBytes < 0 {
		return nil, nil, fmt.Errorf("%w: --rerank-max-body %d is negative", ErrConfig, cfg.Reranker.MaxBodyBytes)
	}
	cfg.Reranker.Model.ORTLib = cmp.Or(cfg.Reranker.Model.ORTLib, cfg.Index.Model.ORTLib)
	m, closeModels, err := openModels(ctx, cfg.Reranker, cfg.PolicyTokenizer)
	if err != nil {
		return nil, nil, err
	}
	cols, exec, closeCols, err := OpenCollections(ctx, cfg.Collections, enc)
	if err != nil {
		closeModels()
		return nil, nil, err
	}
	if m.rr != nil {
		logger.Info("reranker loaded", "dir", cfg.Reranker.Model.Dir, "name", m.rr.Name(), "kind", m.rr.Kind(), "max_length", m.rr.MaxLength(), "startup_check", cfg.Reranker.Check)
	}
	sh := &shared{models: m, exec: exec,
		hybrid: server.JSON(hybrid.NewService(cols, hybrid.ServiceConfig{}).Serve, server.EndpointOptions{MaxBodyBytes: hybrid.DefaultMaxBodyBytes})}
	return sh, func() { closeCols(); closeModels() }, nil
}

// newRuntime is the program runtime over docs and retrievers with sh's
// models. One runtime serves both program endpoints of a service, so its
// bound on concurrently running programs (sdk.Config.MaxConcurrent) holds
// for the whole service.
func newRuntime(docs sdk.Corpus, retrievers map[string]rlsearch.Retriever, sh *shared, b sdk.Budgets) (*sdk.Runtime, error) {
	cfg := sdk.Config{Retrievers: retrievers, Docs: docs, Budgets: b, Tokens: sh.tokens}
	if sh.rr != nil {
		cfg.Reranker = sh.rr
	}
	return sdk.New(cfg)
}

// placer is implemented by models that report where they run and why
// (embed.Encoder, rerank.Reranker).
type placer interface {
	Placement() (device, reason string)
}

// canaryReporter is implemented by models that ran (or skipped) the
// startup model canary before serving on a GPU.
type canaryReporter interface {
	CanaryReport() canary.Report
}

var (
	_ placer         = (*embed.Encoder)(nil)
	_ placer         = (*rerank.Reranker)(nil)
	_ canaryReporter = (*embed.Encoder)(nil)
	_ canaryReporter = (*rerank.Reranker)(nil)
)

// healthWithModels adds "models" to the /healthz fields of base (the
// index's, with the cache's): for the query encoder (of ix; a router, ix
// nil, has none: its shards encode) and the reranker, where each runs
// ("cpu", "gpu:0", "cuda:0"), why (the device asked for, the GPU's name,
// or why "auto" ended on the CPU) and the model canary's report
// (internal/canary.Report: ran, passed, the measure against its bar). It
// logs the same at startup.
func healthWithModels(base func() map[string]any, ix *index.Index, rr *rerank.Reranker, logger *slog.Logger) func() map[string]any {
	models := map[string]any{}
	if ix != nil {
		if p, ok := ix.Encoder().(placer); ok {
			d, why := p.Placement()
			models["encoder"] = map[string]any{"device": d, "reason": why}
			if c, ok := p.(canaryReporter); ok {
				models["encoder"].(map[string]any)["canary"] = c.CanaryReport()
			}
			logger.Info("query encoder placement", "device", d, "reason", why)
		}
	}
	if rr != nil {
		d, why := rr.Placement()
		models["reranker"] = map[string]any{"device": d, "reason": why, "canary": rr.CanaryReport()}
		logger.Info("reranker placement", "device", d, "reason", why)
	}
	return func() map[string]any {
		h := base()
		h["models"] = models
		return h
	}
}
