package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rlsearch/rlsearch"
)

// DocSource maps index rows to corpus documents.
//
// Implementations must be safe for concurrent use. Doc returns an error for
// a row outside [0, Len()).
type DocSource interface {
	Doc(row int32) (rlsearch.Document, error)
	Len() int
}

// ContextDocSource is a DocSource whose fetches can be stopped: a remote
// source (the router's) stops a fetch when ctx ends, so no fetch outlives
// the request that asked for it.
type ContextDocSource interface {
	DocSource
	DocContext(ctx context.Context, row int32) (rlsearch.Document, error)
}

// DocOf returns src's document at row, within ctx when src is a
// ContextDocSource.
func DocOf(ctx context.Context, src DocSource, row int32) (rlsearch.Document, error) {
	if cs, ok := src.(ContextDocSource); ok {
		return cs.DocContext(ctx, row)
	}
	return src.Doc(row)
}

// Defaults for the zero fields of Config.
const (
	// DefaultMaxTopK bounds "topk" per request.
	DefaultMaxTopK = 1000
	// DefaultMaxQueries bounds len("queries") per request: 32,768. Search-R1's
	// trainer sends every active rollout's query in one request (2,560 in
	// its shipped GRPO scripts, 8,192 and more in larger runs) and crashes
	// (KeyError('result')) on any non-200, so the default is twice the
	// 16,384 queries at topk 10 that a large run sends.
	DefaultMaxQueries = 32_768
	// DefaultMaxBodyBytes bounds the request body: 16 MiB.
	DefaultMaxBodyBytes = 16 << 20
	// DefaultMaxResults bounds len("queries") × "topk", the hits one
	// request may ask for: 327,680, DefaultMaxQueries at topk 10. A hit
	// with its passage and score is about 700 bytes of JSON on the wiki-18
	// corpus (4,096 × 1,000 hits measured at 2.9 GB), so the response is up
	// to about 230 MB; it is streamed, so the server holds only the hit
	// array (8 bytes a hit) and a 64 KiB buffer, while a 50 KB body asking
	// for millions of hits still gets 413.
	DefaultMaxResults = 327_680
	// DefaultChunkQueries is Config.ChunkQueries left zero: 1,024 queries
	// per Retrieve call, so that a retriever's per-call working memory
	// (score buffers, per-query lists) stays that of 1,024 queries however
	// large the request.
	DefaultChunkQueries = 1024
	// DefaultReadTimeout bounds reading one request, headers and body
	// (http.Server.ReadTimeout), so that a client stalling mid-body cannot
	// hold a connection and its handler forever. A 16 MiB body needs only
	// about 2.2 Mbit/s to arrive within it.
	DefaultReadTimeout = 60 * time.Second
	// readHeaderTimeout bounds reading the request headers (at most
	// ReadTimeout).
	readHeaderTimeout = 10 * time.Second
	// DefaultShutdownTimeout bounds how long ListenAndServe waits for
	// in-flight requests after its context is cancelled.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultWriteTimeout is Config.WriteTimeout's default: far above any
	// answer of a 32,768-query batch on a CPU retriever (tens of seconds).
	DefaultWriteTimeout = 10 * time.Minute
	// defaultTopK is Search-R1's retrieval_topk default (retrieval_server.py).
	defaultTopK = 3
)

// Config configures a Server. Zero fields take the documented defaults.
type Config struct {
	// Retrievers by API name ("bm25", "e5"); at least one, none nil.
	Retrievers map[string]rlsearch.Retriever
	// Default is the retriever used when a request has no "retriever"
	// field. It must be a key of Retrievers; it may be left empty when
	// Retrievers has exactly one entry.
	Default string
	// Unserved names retrievers the index could serve but this server
	// does not, with the reason (e.g. "e5": "the index has a vector file
	// (dense.shard) but serve was started without --model"): a request for one gets a
	// 400 saying why instead of only "unknown retriever". Optional.
	Unserved map[string]string
	// Docs maps the rows in retrieval hits to documents. Required.
	Docs DocSource
	// MaxTopK bounds "topk"; 0 means DefaultMaxTopK (1000).
	MaxTopK int
	// MaxQueries bounds the number of queries per request; 0 means
	// DefaultMaxQueries (32,768).
	MaxQueries int
	// MaxBodyBytes bounds the request body in bytes; 0 means
	// DefaultMaxBodyBytes (16 MiB).
	MaxBodyBytes int64
	// MaxResults bounds the hits a /retrieve request may ask for,
	// len("queries") × "topk" (the default topk counts), so that a small
	// body cannot demand a response of gigabytes; 0 means
	// DefaultMaxResults (327,680). Over it the answer is 413 naming
	// "topk".
	MaxResults int
	// ChunkQueries is the most non-blank queries of one request passed to
	// one Retrieve call; a larger request is searched chunk after chunk,
	// all before the first byte of the response. 0 means
	// DefaultChunkQueries (1,024).
	ChunkQueries int
	// ReadTimeout bounds reading one request, headers and body, from the
	// connection (http.Server.ReadTimeout; headers alone get at most 10 s);
	// 0 means DefaultReadTimeout (60 s). A /retrieve body not received in
	// time is answered 408 and the connection is closed. It is applied by
	// ListenAndServe only, not by Handler. There is deliberately no write
	// timeout: a large batch on a slow retriever may take minutes, and the
	// retrieval itself is not bounded by ReadTimeout.
	ReadTimeout time.Duration
	// MaxInFlight bounds the requests handled at once, every endpoint but
	// /healthz and /metrics (admission control: each heavy request holds
	// ~10 MB while it runs, so an unbounded burst grows memory without
	// limit). A request beyond it waits up to 1 s for a slot behind at
	// most 8 × MaxInFlight others; past either it is answered with 503
	// (kind overloaded) and Retry-After: 1. 0 means
	// DefaultMaxInFlight(): 4 per core (GOMAXPROCS), at least 16;
	// rlsearch.Off (-1) means unbounded.
	MaxInFlight int
	// WriteTimeout bounds a response from the end of its request's
	// headers to its last byte (http.Server.WriteTimeout), so a client
	// that stops reading cannot hold a handler and its memory. 0 means
	// DefaultWriteTimeout (10 min); -1 means none. Applied by
	// ListenAndServe only.
	WriteTimeout time.Duration
	// Health, when set, adds fields (index sizes, backend, model) to the
	// /healthz answer. It is called once per /healthz request, from any
	// goroutine. Its keys cannot override "status", "retrievers",
	// "default" or "num_docs".
	Health func() map[string]any
	// Fingerprint, when set, identifies what produces the answers (index
	// build, encoder configuration hash, dense backend and its parameters,
	// reranker: app.Fingerprint's String). Every response carries it in
	// the FingerprintHeader header and /healthz in "fingerprint"; it must
	// be printable ASCII.
	Fingerprint string
	// FingerprintInfo, when set, is /healthz's "fingerprint" instead of the
	// bare string (the fingerprint's parts).
	FingerprintInfo any
	// Logger receives access logs and errors; nil means slog.Default().
	Logger *slog.Logger
	// Registry receives the server's metrics and is what /metrics serves;
	// nil means a new registry that also holds the Go runtime and process
	// collectors. New fails if the registry already holds metrics with the
	// same names (for example from another Server).
	Registry *prometheus.Registry
	// Collectors are further metrics registered into Registry (and so
	// served by /metrics), such as the result cache's; none may be nil.
	Collectors []prometheus.Collector
	// ShutdownTimeout bounds the graceful shutdown in ListenAndServe; 0
	// means DefaultShutdownTimeout (30 s).
	ShutdownTimeout time.Duration
	// Extra mounts further JSON endpoints by exact path (for example
	// "/v1/programs/execute"; see JSON), each decoded, answered and
	// instrumented like /retrieve (access log, request counter and latency
	// under its path as the endpoint label, panic recovery, the one error
	// mapping). Paths must start with "/" and must not be a built-in path.
	Extra map[string]Endpoint
	// Pages mounts read-only handlers by ServeMux pattern (a path ending
	// in "/" is a subtree, e.g. "/ui/" for the rollout inspector), each
	// instrumented like the endpoints (access log, metrics under its
	// pattern, panic recovery); the handler owns its methods and bodies.
	// Patterns must start with "/" and must not be a built-in or Extra path.
	Pages map[string]http.Handler

	// The other frameworks' dialects (dialect_retrieve.go, docpages.go).

	// BrowseCompK is the fixed k of /retrieve on a ProfileBrowseComp
	// listener; 0 means DefaultBrowseCompK (5).
	BrowseCompK int
	// Reranker, when set, serves StepSearch's POST /retrieve/rerank
	// (without it the path answers 404 saying so).
	Reranker rlsearch.Reranker
	// Tokens counts the tokens of POST /access's "max_tokens" (the
	// program observations' counter: the policy tokenizer or
	// sdk.BoundTokens); nil refuses max_tokens.
	Tokens rlsearch.TokenCounter
	// MaxPageBytes bounds one page of /access (and is its default
	// max_bytes); 0 means DefaultMaxPageBytes (128 KiB).
	MaxPageBytes int
	// MaxAccessBytes bounds one /access reply, urls × max_bytes; 0 means
	// DefaultMaxAccessBytes (32 MiB).
	MaxAccessBytes int64
	// NoPageIndex turns off /access and DocByID (404), for a DocSource
	// that cannot be scanned cheaply (a router over shard servers).
	NoPageIndex bool
	// UnansweredLogEvery is how often a stream of failing requests of one
	// dialect and route is logged (rlsearch_unanswered_requests_total
	// counts every one); 0 means one minute.
	UnansweredLogEvery time.Duration
}

// Validate reports the first invalid field of c, naming it. It does not
// apply defaults.
func (c *Config) Validate() error {
	if len(c.Retrievers) == 0 {
		return errors.New("server: Config.Retrievers is empty")
	}
	for _, r := range c.Fingerprint {
		if r < ' ' || r > '~' {
			return fmt.Errorf("server: Config.Fingerprint %q: want printable ASCII (it is a header value)", c.Fingerprint)
		}
	}
	for name, r := range c.Retrievers {
		if name == "" {
			return errors.New("server: Config.Retrievers has an empty name")
		}
		if r == nil {
			return fmt.Errorf("server: Config.Retrievers[%q] is nil", name)
		}
	}
	if c.Default == "" && len(c.Retrievers) != 1 {
		return fmt.Errorf("server: Config.Default is empty; choose one of %v", sortedKeys(c.Retrievers))
	}
	if c.Default != "" {
		if _, ok := c.Retrievers[c.Default]; !ok {
			return fmt.Errorf("server: Config.Default %q is not in Config.Retrievers %v", c.Default, sortedKeys(c.Retrievers))
		}
	}
	if c.Docs == nil {
		return errors.New("server: Config.Docs is nil")
	}
	if c.MaxTopK < 0 {
		return fmt.Errorf("server: Config.MaxTopK %d is negative", c.MaxTopK)
	}
	if c.MaxQueries < 0 {
		return fmt.Errorf("server: Config.MaxQueries %d is negative", c.MaxQueries)
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("server: Config.MaxBodyBytes %d is negative", c.MaxBodyBytes)
	}
	if c.MaxResults < 0 {
		return fmt.Errorf("server: Config.MaxResults %d is negative", c.MaxResults)
	}
	if c.ChunkQueries < 0 {
		return fmt.Errorf("server: Config.ChunkQueries %d is negative", c.ChunkQueries)
	}
	if c.ReadTimeout < 0 {
		return fmt.Errorf("server: Config.ReadTimeout %v is negative", c.ReadTimeout)
	}
	if c.MaxInFlight < -1 {
		return fmt.Errorf("server: Config.MaxInFlight %d: want -1 (unbounded), 0 (default) or more", c.MaxInFlight)
	}
	if c.WriteTimeout < 0 && c.WriteTimeout != -1 {
		return fmt.Errorf("server: Config.WriteTimeout %v is negative", c.WriteTimeout)
	}
	for path := range c.Extra {
		switch {
		case !strings.HasPrefix(path, "/"):
			return fmt.Errorf("server: Config.Extra path %q must start with /", path)
		case isBuiltinPath(path):
			return fmt.Errorf("server: Config.Extra path %q is a built-in endpoint", path)
		case c.Extra[path].serve == nil:
			return fmt.Errorf("server: Config.Extra[%q] is nil", path)
		}
	}
	for path, h := range c.Pages {
		switch _, dup := c.Extra[path]; {
		case !strings.HasPrefix(path, "/") || isBuiltinPath(path) || dup:
			return fmt.Errorf("server: Config.Pages path %q must start with / and not be a built-in or Extra path", path)
		case h == nil:
			return fmt.Errorf("server: Config.Pages[%q] is nil", path)
		}
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("server: Config.ShutdownTimeout %v is negative", c.ShutdownTimeout)
	}
	switch {
	case c.BrowseCompK < 0:
		return fmt.Errorf("server: Config.BrowseCompK %d is negative", c.BrowseCompK)
	case c.MaxPageBytes < 0:
		return fmt.Errorf("server: Config.MaxPageBytes %d is negative", c.MaxPageBytes)
	case c.MaxAccessBytes < 0:
		return fmt.Errorf("server: Config.MaxAccessBytes %d is negative", c.MaxAccessBytes)
	case c.UnansweredLogEvery < 0:
		return fmt.Errorf("server: Config.UnansweredLogEvery %v is negative", c.UnansweredLogEvery)
	}
	return nil
}

// Server is the HTTP API. It is safe for concurrent use; one Server may
// back several listeners.
type Server struct {
	cfg     Config // defaults applied
	names   []string
	stable  []string // names whose retriever is rlsearch.PrefixStable
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *metrics
	handler http.Handler
	paths   []string
	pages   *pageIndex
	unans   *unanswered
	slots   chan struct{} // admission: one per request in flight; nil = unbounded
	waiting *atomic.Int64 // requests waiting for a slot (shared by the copies ServeListeners makes)
	busy    *atomic.Int64 // handlers running (Drain)
}

// New validates cfg, applies its defaults and registers the server's
// metrics. It returns the error of Validate or of the metric registration.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Default == "" {
		for name := range cfg.Retrievers {
			cfg.Default = name
		}
	}
	cfg.MaxTopK = cmp.Or(cfg.MaxTopK, DefaultMaxTopK)
	cfg.MaxQueries = cmp.Or(cfg.MaxQueries, DefaultMaxQueries)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxResults = cmp.Or(cfg.MaxResults, DefaultMaxResults)
	cfg.ChunkQueries = cmp.Or(cfg.ChunkQueries, DefaultChunkQueries)
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, DefaultShutdownTimeout)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.BrowseCompK = cmp.Or(cfg.BrowseCompK, DefaultBrowseCompK)
	cfg.MaxPageBytes = cmp.Or(cfg.MaxPageBytes, DefaultMaxPageBytes)
	cfg.MaxAccessBytes = cmp.Or(cfg.MaxAccessBytes, DefaultMaxAccessBytes)
	cfg.UnansweredLogEvery = cmp.Or(cfg.UnansweredLogEvery, time.Minute)
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		if err := cfg.Registry.Register(collectors.NewGoCollector()); err != nil {
			return nil, fmt.Errorf("server: register go collector: %w", err)
		}
		if err := cfg.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, fmt.Errorf("server: register process collector: %w", err)
		}
	}
	// Copy the map so that later changes by the caller do not race with
	// request handling.
	rs := make(map[string]rlsearch.Retriever, len(cfg.Retrievers))
	for k, v := range cfg.Retrievers {
		rs[k] = v
	}
	cfg.Retrievers = rs

	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	for i, c := range cfg.Collectors {
		if c == nil {
			return nil, fmt.Errorf("server: Config.Collectors[%d] is nil", i)
		}
		if err := cfg.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("server: register Config.Collectors[%d]: %w", i, err)
		}
	}
	s := &Server{
		cfg:     cfg,
		names:   sortedKeys(rs),
		stable:  prefixStable(rs),
		log:     cfg.Logger,
		reg:     cfg.Registry,
		metrics: m,
	}
	switch n := cfg.MaxInFlight; {
	case n == 0:
		s.slots = make(chan struct{}, DefaultMaxInFlight())
	case n > 0:
		s.slots = make(chan struct{}, n)
	}
	s.waiting, s.busy = new(atomic.Int64), new(atomic.Int64)
	s.pages = newPageIndex(s)
	if s.unans, err = newUnanswered(cfg.Registry, cfg.Logger, cfg.UnansweredLogEvery); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/retrieve", s.instrument(endpointRetrieve, s.handleRetrieve))
	dialectEndpoints := s.mountDialects(mux)
	mux.Handle("/healthz", s.instrument(endpointHealthz, s.handleHealthz))
	metricsHandler := promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
	mux.Handle("/metrics", s.instrument(endpointMetrics, func(w *respWriter, r *http.Request) {
		if !s.allowMethod(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		metricsHandler.ServeHTTP(w, r)
	}))
	endpoints := append([]string{endpointRetrieve, endpointHealthz, endpointMetrics}, sortedKeys(cfg.Extra)...)
	endpoints = append(endpoints, dialectEndpoints...)
	for path, ep := range cfg.Extra {
		mux.Handle(path, s.instrument(path, s.handleEndpoint(ep)))
	}
	for _, path := range sortedKeys(cfg.Pages) {
		h := cfg.Pages[path]
		dialect := pageDialect(path)
		mux.Handle(path, s.instrument(path, func(w *respWriter, r *http.Request) { w.dialect = dialect; h.ServeHTTP(w, r) }))
		endpoints = append(endpoints, path)
	}
	s.paths = slices.Sorted(slices.Values(endpoints))
	mux.Handle("/", s.instrument(endpointOther, func(w *respWriter, r *http.Request) {
		s.fail(w, http.StatusNotFound, kindNotFound, "no such endpoint: "+r.URL.Path+" (have "+strings.Join(endpoints, ", ")+")", "")
	}))
	s.handler = mux
	if fp := cfg.Fingerprint; fp != "" {
		s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(FingerprintHeader, fp)
			mux.ServeHTTP(w, r)
		})
	}
	return s, nil
}

// FingerprintHeader is the response header that carries
// Config.Fingerprint on every answer (retrieval, programs, mutate,
// rewards, errors), so that a trainer can log what produced each
// observation.
const FingerprintHeader = "X-Rlsearch-Fingerprint"

// Drain waits up to timeout for every handler of s (served by Handler or
// ListenAndServe) to return and reports whether none is running. The
// owner of the index under s calls it before closing the index, so that
// nothing is unmapped under a running handler; when it reports false the
// index must be left open (the process is about to exit anyway).
func (s *Server) Drain(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for s.Busy() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// Busy is the number of handlers of s running now.
func (s *Server) Busy() int64 {
	if s.busy == nil {
		return 0
	}
	return s.busy.Load()
}

// DefaultMaxInFlight is Config.MaxInFlight's default: 4 requests per
// core (GOMAXPROCS), at least 16.
func DefaultMaxInFlight() int { return max(16, 4*runtime.GOMAXPROCS(0)) }

func (s *Server) writeTimeout() time.Duration {
	switch s.cfg.WriteTimeout {
	case 0:
		return DefaultWriteTimeout
	case -1:
		return 0
	}
	return s.cfg.WriteTimeout
}

// Handler returns the HTTP handler serving every endpoint. It is safe for
// concurrent use.
func (s *Server) Handler() http.Handler { return s.handler }

// Paths returns every path the server answers, sorted: /retrieve,
// /healthz, /metrics, the Config.Extra endpoints and the Config.Pages
// patterns. The slice is the caller's.
func (s *Server) Paths() []string { return slices.Clone(s.paths) }

// Registry returns the registry that /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// ListenAndServe listens on addr (host:port; ":0" picks a free port),
// calls ready with the bound address when ready is non-nil, and serves
// until ctx is cancelled. Each request must arrive, headers and body,
// within Config.ReadTimeout; responses have no write timeout, so a long
// retrieval is never cut. Once ctx is cancelled it stops accepting
// connections and waits up to Config.ShutdownTimeout for in-flight
// requests to finish (http.Server.Shutdown), after which it closes the
// remaining connections.
//
// It returns nil after a clean shutdown, the listen or serve error
// otherwise, or the shutdown error (context.DeadlineExceeded) when
// in-flight requests outlived the timeout. In that case the remaining
// connections are closed (which cancels their requests' contexts) and it
// waits up to ShutdownTimeout again for their handlers to return, so that
// the caller's deferred close of the index does not unmap memory under a
// running search; handlers still running after that are named in the error.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", addr, err)
	}
	var active sync.WaitGroup
	var running atomic.Int64
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			active.Add(1)
			running.Add(1)
			defer active.Done()
			defer running.Add(-1)
			s.handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: min(readHeaderTimeout, s.cfg.ReadTimeout),
		// ReadTimeout cuts a stalled body. It does not cancel a handler
		// that outlives it: net/http clears the read deadline once the
		// body is read (connReader.startBackgroundRead).
		ReadTimeout:  s.cfg.ReadTimeout,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		WriteTimeout: s.writeTimeout(),
	}
	if ready != nil {
		ready(ln.Addr())
	}
	s.log.Info("server: listening", "addr", ln.Addr().String(), "retrievers", s.names, "default", s.cfg.Default, "num_docs", s.cfg.Docs.Len())

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	select {
	case err := <-serveErr:
		// Serve never returns nil; it failed on its own.
		return fmt.Errorf("server: serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("server: shutting down", "timeout", s.cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		<-serveErr
		left := running.Load()
		s.log.Warn("server: shutdown timed out; connections closed, waiting for their handlers", "running", left, "timeout", s.cfg.ShutdownTimeout)
		finished := make(chan struct{})
		go func() { active.Wait(); close(finished) }()
		select {
		case <-finished:
			return fmt.Errorf("server: shutdown: %w", err)
		case <-time.After(s.cfg.ShutdownTimeout):
			return fmt.Errorf("server: shutdown: %w; %d request handlers still running %v after their connections were closed", err, running.Load(), s.cfg.ShutdownTimeout)
		}
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: serve: %w", err)
	}
	s.log.Info("server: stopped")
	return nil
}

// handleHealthz answers GET /healthz.
func (s *Server) handleHealthz(w *respWriter, r *http.Request) {
	if !s.allowMethod(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	body := map[string]any{}
	if s.cfg.Health != nil {
		for k, v := range s.cfg.Health() {
			body[k] = v
		}
	}
	body["status"] = "ok"
	body["retrievers"] = s.names
	body["prefix_stable"] = s.stable
	body["default"] = s.cfg.Default
	body["num_docs"] = s.cfg.Docs.Len()
	body["pages"] = s.pages.health()
	if s.cfg.FingerprintInfo != nil {
		body["fingerprint"] = s.cfg.FingerprintInfo
	} else if s.cfg.Fingerprint != "" {
		body["fingerprint"] = s.cfg.Fingerprint
	}
	b, err := json.Marshal(body)
	if err != nil {
		s.log.Error("server: encode /healthz", "err", err)
		s.fail(w, http.StatusInternalServerError, kindInternal, "encode health: "+err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(append(b, '\n'))
	}
}

// prefixStable lists, sorted, the names of rs whose top-k lists are cuts of
// their wider lists (rlsearch.PrefixStable: BM25, exact dense search). A
// router learns it from /healthz and shares one wide search among narrower
// callers only for these.
func prefixStable(rs map[string]rlsearch.Retriever) []string {
	out := []string{}
	for _, n := range sortedKeys(rs) {
		if rlsearch.PrefixStable(rs[n]) {
			out = append(out, n)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
