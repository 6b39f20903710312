package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/cache"
	"github.com/rlsearch/rlsearch/server/router"
)

// serveFlags configure the server (app.Config); bench uses the same ones.
type serveFlags struct {
	idx           indexFlags
	cfg           app.Config // Index, Logger and Reward are set by newServer
	addr          string
	listen        []string // --listen ADDR[=PROFILE][@CORPUS]
	programMemMiB int64
	cacheSave     string // --cache-save
}

func (s *serveFlags) bind(fs *flag.FlagSet) {
	c := &s.cfg
	s.idx.bindCorpora(fs)
	fs.Var((*multiFlag)(&s.listen), "listen", "another listener, ADDR[=PROFILE][@CORPUS] (repeatable): PROFILE searchr1 (default), browsecomp (/retrieve {\"query\"} answered in BrowseComp-Plus's flat shape) or asearcher (documents carry \"url\"); CORPUS one of --index's names; with --listen, --addr is served only when given explicitly")
	fs.IntVar(&c.Server.BrowseCompK, "browsecomp-k", server.DefaultBrowseCompK, "hits per /retrieve request on a browsecomp listener (BrowseComp-Plus's server --k)")
	fs.IntVar(&c.Server.MaxPageBytes, "max-page-bytes", server.DefaultMaxPageBytes, "largest page of POST /access in bytes (whole passages, then a marker line)")
	fs.BoolVar(&c.PagesAtStart, "pages-at-start", false, "build the page index (documents by id for MCP get_document, pages for /access: 16 bytes per passage) at start instead of on first use")
	fs.StringVar(&c.Collections, "collections", "", "hybrid collections for POST /v1/hybrid/execute: one collection directory or a directory of them (see 'rlsearch hybrid build')")
	fs.BoolVar(&s.idx.verifyDocs, "verify-docs", false, "check every docstore block's CRC at startup (one read of docs.zst: 9 s for 21M passages); without it each block's CRC is checked when the block is first read, and `rlsearch verify` checks every file")
	fs.StringVar(&c.PolicyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the programs' 2,048-token observation cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.Uint64Var(&c.Budgets.MaxSteps, "program-max-steps", 0, "Starlark step budget of each program, builtin work included (0 = 1,000,000)")
	fs.Int64Var(&s.programMemMiB, "program-max-memory", 0, "memory budget of each program in MiB: bytes its operations are charged before they run (0 = 64)")
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8000", "listen address (Search-R1's retrieval server uses port 8000)")
	fs.StringVar(&c.Retriever, "retriever", "", `default retriever when a request names none: "bm25" or "e5" (default e5 when --model is set, else bm25)`)
	fs.IntVar(&c.Server.MaxTopK, "max-topk", server.DefaultMaxTopK, "largest accepted topk")
	fs.IntVar(&c.Server.MaxResults, "max-results", server.DefaultMaxResults, "most hits per request, queries x topk (413 above it)")
	fs.IntVar(&c.Server.MaxQueries, "max-queries", server.DefaultMaxQueries, "most queries per request (Search-R1 sends every active rollout's query in one request)")
	fs.IntVar(&c.Server.ChunkQueries, "chunk-queries", server.DefaultChunkQueries, "most queries of one /retrieve request searched per retriever call; larger requests are searched chunk after chunk before the response streams")
	fs.Int64Var(&c.Server.MaxBodyBytes, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes")
	fs.IntVar(&c.Server.MaxInFlight, "max-inflight", 0, "most requests handled at once (admission control; 0 = 4 per core, at least 16; -1 = unbounded); more wait up to 1 s, then 503 with Retry-After")
	fs.DurationVar(&c.Server.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "longest a response may take from its request's headers to its last byte")
	fs.Int64Var(&c.CacheBytes, "cache-bytes", cache.DefaultMaxBytes, "result cache shared by /retrieve, programs, mutate and rewards, in bytes (LRU; keyed by index build, retriever, topk and the analysed BM25 query or exact dense query); 0 = off")
	fs.StringVar(&c.CacheLoad, "cache-load", "", "result cache file to load at start (written by --cache-save; refused when saved under another fingerprint: index build, encoder, dense backend and parameters, reranker); a missing file is a cold start; one --index only")
	fs.StringVar(&s.cacheSave, "cache-save", "", "write the result cache to this file (atomically, zstd, checksummed) when the server shuts down, for --cache-load on a restart or on another replica of the same build; one --index only")
	fs.IntVar(&c.BatchMax, "batch-max", 64, "most queries the e5 batching queue merges into one encoder call")
	fs.DurationVar(&c.BatchWait, "batch-wait", 2*time.Millisecond, "how long the e5 batching queue waits to fill a batch")
	fs.Var((*multiFlag)(&c.UI.Dumps), "inspect", "rollout dump (JSONL: verl, Search-R1, chat messages, rlsearch trajectories) shown by the inspector at /ui/; repeatable; loaded in the background")
	fs.StringVar(&c.UI.Gold, "inspect-gold", "", "questions JSONL joined to inspected rollouts without gold (by id, question, or question text in the prompt)")
	bindRerank(fs, &c.Reranker)
}

// newServer assembles the server (app.New) with the rewards configured
// from the environment (rewardEnv). closeAll releases everything; on
// error nothing stays open.
func (s *serveFlags) newServer(ctx context.Context, logger *slog.Logger) (*server.Server, *index.Index, func(), error) {
	if s.programMemMiB < 0 || s.programMemMiB > 1<<20 {
		return nil, nil, nil, usageErr("--program-max-memory %d MiB is out of range (0 to 1048576)", s.programMemMiB)
	}
	cfg := s.cfg
	cfg.Index, cfg.Logger, cfg.Reward = s.idx.config(), logger, rewardEnv()
	cfg.Budgets.MaxMemoryBytes = s.programMemMiB << 20
	svc, err := app.New(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return svc.Server, svc.Index, svc.Close, nil
}

func serveCmd(fs *flag.FlagSet) runFunc {
	var (
		s  serveFlags
		rf routerFlags
	)
	s.bind(fs)
	rf.bind(fs)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		logger := slog.New(slog.NewJSONHandler(stderr, nil))
		addrSet := false
		fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
		for _, l := range s.listen {
			_, _, corpus, err := server.ParseListen(l)
			if err != nil {
				return usageErr("%v", err)
			}
			known := corpus == "" || (rf.shards != "" && corpus == app.DefaultCorpus)
			for _, c := range s.idx.corpora {
				known = known || corpus == cmp.Or(c.Name, app.DefaultCorpus)
			}
			if !known {
				return usageErr("--listen %s: no --index names corpus %q", l, corpus)
			}
		}
		if rf.shards != "" {
			svc, err := rf.newRouter(ctx, &s, logger)
			if err != nil {
				return err
			}
			defer svc.Close()
			logger.Info("router ready", "shards", svc.Router.Shards(), "build", svc.Router.BuildID(), "retrievers", slices.Sorted(maps.Keys(svc.Router.Retrievers())))
			corpora, err := server.NewCorpora([]string{app.DefaultCorpus}, []*server.Server{svc.Server})
			if err != nil {
				return err
			}
			return serveListeners(ctx, svc.Server, corpora, s.addr, addrSet, s.listen, stdout)
		}
		if len(s.idx.corpora) == 0 {
			return usageErr("serve needs --index DIR (an index, or one shard of a sharded build; NAME=DIR, repeatable, for several corpora) or --shards URL,... (a router over shard servers)")
		}
		if len(s.idx.corpora) > 1 && (s.cfg.CacheLoad != "" || s.cacheSave != "") {
			return usageErr("--cache-load and --cache-save serve one --index (a cache file is keyed by one index's fingerprint)")
		}
		m, err := s.newMulti(ctx, logger)
		if err != nil {
			return err
		}
		defer m.Close()
		for i, svc := range m.Services {
			ix := svc.Index
			logger.Info("index loaded", "corpus", m.Corpora.Names()[i], "dir", ix.Dir, "passages", ix.Len(), "retrievers", ix.RetrieverNames(), "backend", ix.SearchBackend(), "open_seconds", ix.OpenDuration.Seconds())
		}
		err = serveListeners(ctx, m.Services[0].Server, m.Corpora, s.addr, addrSet, s.listen, stdout)
		if s.cacheSave != "" {
			svc := m.Services[0]
			if serr := svc.SaveCache(s.cacheSave); serr != nil {
				err = errors.Join(err, fmt.Errorf("--cache-save: %w", serr))
			} else {
				logger.Info("result cache saved", "file", s.cacheSave, "entries", svc.Cache.Stats().Entries, "fingerprint", svc.Fingerprint.String())
			}
		}
		return err
	}
}

// newMulti assembles one service per --index corpus (app.NewMulti) with
// the rewards configured from the environment.
func (s *serveFlags) newMulti(ctx context.Context, logger *slog.Logger) (*app.Multi, error) {
	if s.programMemMiB < 0 || s.programMemMiB > 1<<20 {
		return nil, usageErr("--program-max-memory %d MiB is out of range (0 to 1048576)", s.programMemMiB)
	}
	cfg := s.cfg
	cfg.Index, cfg.Logger, cfg.Reward = s.idx.config(), logger, rewardEnv()
	cfg.Budgets.MaxMemoryBytes = s.programMemMiB << 20
	m, err := app.NewMulti(ctx, cfg, s.idx.corpora)
	if errors.Is(err, app.ErrConfig) {
		return nil, usageErr("%v", err)
	}
	return m, err
}

// serveListeners serves --addr (the searchr1 profile over the default
// corpus; with --listen only when given explicitly) and every --listen
// until ctx is cancelled; stdout gets "listening on http://ADDR" per
// listener, with its profile and corpus when they are not the defaults.
func serveListeners(ctx context.Context, srv *server.Server, c *server.Corpora, addr string, addrSet bool, listen []string, stdout io.Writer) error {
	var ls []server.Listener
	var notes []string
	add := func(a string, p server.Profile, corpus string) error {
		h, err := c.Handler(p, corpus)
		if err != nil {
			return usageErr("--listen %s: %v", a, err)
		}
		note := ""
		if p != server.ProfileSearchR1 || (corpus != "" && corpus != c.Names()[0]) {
			note = fmt.Sprintf(" (profile %s, corpus %s)", p, cmp.Or(corpus, c.Names()[0]))
		}
		ls = append(ls, server.Listener{Addr: a, Handler: h, Desc: a + "=" + string(p) + "@" + cmp.Or(corpus, c.Names()[0])})
		notes = append(notes, note)
		return nil
	}
	if addrSet || len(listen) == 0 {
		if err := add(addr, server.ProfileSearchR1, ""); err != nil {
			return err
		}
	}
	for _, l := range listen {
		a, p, corpus, _ := server.ParseListen(l) // checked before anything was opened
		if err := add(a, p, corpus); err != nil {
			return err
		}
	}
	return srv.ServeListeners(ctx, ls, func(l server.Listener, a net.Addr) {
		for i := range ls {
			if ls[i].Desc == l.Desc {
				fmt.Fprintf(stdout, "listening on http://%s%s\n", a, notes[i])
			}
		}
	})
}

// routerFlags configure serve's router mode (app.NewRouter).
type routerFlags struct {
	cfg    router.Config
	shards string
	hedge  string
}

func (f *routerFlags) bind(fs *flag.FlagSet) {
	c := &f.cfg
	fs.StringVar(&f.shards, "shards", "", "router mode: serve the same API over the shard servers at these URLs (http://host:port, comma-separated, replicas of a shard included, any order; a host name resolving to several addresses, such as a Kubernetes headless Service, gives one replica per address); --index must not be set")
	fs.StringVar(&c.BuildID, "shard-build", "", "router: the build id every shard must serve (manifest.json build_id); default: the one the shards found at start agree on")
	fs.StringVar(&c.OnMissingShard, "on-missing-shard", router.Fail, "router: when a shard has no live replica or no answer within its deadline: fail (503 with Retry-After naming the shard) or partial (answer from the other shards, flagged by the X-Rlsearch-Partial header and \"partial\" in /retrieve)")
	fs.DurationVar(&c.ShardTimeout, "shard-timeout", router.DefaultShardTimeout, "router: deadline of one shard's part of a request (retries and hedges included), plus --shard-timeout-per-query per query")
	fs.DurationVar(&c.PerQueryTimeout, "shard-timeout-per-query", router.DefaultPerQueryTimeout, "router: added to --shard-timeout per query of a request")
	fs.IntVar(&c.Retries, "shard-retries", router.DefaultRetries, "router: further attempts after a failed shard request, on another replica when there is one (0 = none)")
	fs.StringVar(&f.hedge, "hedge-after", "auto", "router: ask a second replica of a shard when the first has not answered after this long: auto (the shard's recent 95th percentile, at least 2ms), off, or a duration")
	fs.IntVar(&c.HedgeMaxQueries, "hedge-max-queries", router.DefaultHedgeMaxQueries, "router: hedge only requests of at most this many queries (a hedged batch doubles its work)")
	fs.DurationVar(&c.HealthInterval, "shard-health-interval", router.DefaultHealthInterval, "router: how often each replica's /healthz is read (a restarted shard rejoins at its next check)")
	fs.DurationVar(&c.HealthTimeout, "shard-health-timeout", router.DefaultHealthTimeout, "router: how long one health check may take; a replica is down after two failed checks in a row (at once when nothing listens)")
	fs.DurationVar(&c.ResolveInterval, "shard-resolve-interval", router.DefaultResolveInterval, "router: how often host names in --shards are resolved again")
	fs.DurationVar(&c.StartTimeout, "shard-start-timeout", router.DefaultStartTimeout, "router: how long to wait at start for every shard to have a live replica")
	fs.BoolVar(&c.NoResolve, "shards-no-resolve", false, "router: use each --shards host name as one replica instead of one per address (a ClusterIP Service)")
	fs.IntVar(&c.MaxInFlight, "router-max-inflight", router.DefaultMaxInFlight, "router: most fan-outs at once; more are refused with 503")
	fs.IntVar(&c.MaxConnsPerReplica, "router-max-conns", router.DefaultMaxConnsPerReplica, "router: most connections to one replica (kept alive and reused)")
	fs.IntVar(&c.DocCache, "router-doc-cache", router.DefaultDocCache, "router: documents kept for the program runtime's lookups by row")
}

// newRouter assembles router mode over the flags of s that apply to it.
func (f *routerFlags) newRouter(ctx context.Context, s *serveFlags, logger *slog.Logger) (*app.Service, error) {
	if s.idx.cfg.Dir != "" {
		return nil, usageErr("--shards (router mode) and --index exclude each other: the shards serve the index")
	}
	c := f.cfg
	c.Endpoints = strings.Split(f.shards, ",")
	for i := range c.Endpoints {
		c.Endpoints[i] = strings.TrimSpace(c.Endpoints[i])
	}
	switch f.hedge {
	case "auto":
	case "off":
		c.NoHedge = true
	default:
		d, err := time.ParseDuration(f.hedge)
		if err != nil || d <= 0 {
			return nil, usageErr("--hedge-after %q: want auto, off or a positive duration", f.hedge)
		}
		c.HedgeAfter = d
	}
	if c.Retries == 0 {
		c.Retries = -1 // the flag's 0 means none; Config's 0 means the default
	}
	if s.programMemMiB < 0 || s.programMemMiB > 1<<20 {
		return nil, usageErr("--program-max-memory %d MiB is out of range (0 to 1048576)", s.programMemMiB)
	}
	sc := s.cfg
	rc := app.RouterConfig{Router: c, Reranker: sc.Reranker, Server: sc.Server, Retriever: sc.Retriever, Collections: sc.Collections,
		PolicyTokenizer: sc.PolicyTokenizer, Budgets: sc.Budgets, Reward: rewardEnv(), UI: sc.UI, Logger: logger}
	rc.Budgets.MaxMemoryBytes = s.programMemMiB << 20
	rc.Reranker.Model.ORTLib = cmp.Or(rc.Reranker.Model.ORTLib, s.idx.cfg.Model.ORTLib)
	if s.idx.cfg.Model.Dir != "" {
		logger.Warn("router mode ignores --model ($MODEL): every shard server encodes its queries with its own", "model", s.idx.cfg.Model.Dir)
	}
	svc, err := app.NewRouter(ctx, rc)
	if errors.Is(err, router.ErrConfig) {
		return nil, usageErr("%v", err)
	}
	return svc, err
}

// bindRerank binds the reranker behind POST /rerank, rerank() in programs
// and the rerank command: the model and the endpoint's limits. The model's
// ORTLib comes from the caller.
func bindRerank(fs *flag.FlagSet, r *app.RerankConfig) {
	c, s := &r.Model, &r.Service
	fs.StringVar(&c.Dir, "reranker", os.Getenv("RERANKER"), "reranker model directory (Qwen3-Reranker or cross-encoder ONNX export with rlsearch.json); default $RERANKER; empty = no /rerank")
	fs.IntVar(&c.Sessions, "rerank-sessions", 0, "ONNX Runtime sessions for the reranker (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&c.MaxBatchTokens, "rerank-batch-tokens", 0, "most tokens per reranker run, batch size × longest pair (0 = 8192); a longer pair runs alone")
	fs.IntVar(&c.MaxLength, "rerank-max-length", 0, "token budget per (query, document) pair (0 = model config, else 8192 for Qwen3, 512 for cross-encoders)")
	fs.IntVar(&c.BatchSize, "rerank-batch", 0, "pairs per reranker run; concurrent requests share batches (0 = 16)")
	fs.DurationVar(&c.BatchWait, "rerank-wait", 0, "how long a reranker batch waits to fill (0 = 2ms)")
	fs.StringVar(&c.Instruction, "rerank-instruction", "", "Qwen3-Reranker instruction (default: the model card's web search instruction)")
	fs.StringVar(&c.Provider, "rerank-device", "cpu", "where the reranker runs: cpu (ONNX Runtime), gpu or gpu:N (our fp16 Qwen3 forward pass; an error when that GPU cannot run it), auto (GPU 0 when usable and its model canary passes, else cpu; never cuda), cuda or cuda:N (ONNX Runtime's CUDA execution provider, Qwen3 or cross-encoder: needs `make gpu-setup`'s .cache/ort-gpu/libonnxruntime.so.1 as --ort-lib and the CUDA 13 libraries; an error naming what is missing, never the CPU); /healthz says where and why")
	fs.Var(skipFlag{&c.SkipCanary}, "rerank-canary", "before the reranker serves on a GPU (--rerank-device gpu, auto, cuda), score fixed query/document pairs on it and on the CPU and require |Δ score| <= 2e-3 (relative above 1) per pair (auto falls back to the CPU on a mismatch, gpu/cuda refuse to start); --rerank-canary=false skips it")
	fs.BoolVar(&r.Check, "rerank-check", true, "at startup require the reranker to score a relevant passage above irrelevant ones (turn off for random-weight test models)")
	fs.IntVar(&s.MaxQueries, "rerank-max-queries", rerank.DefaultMaxRerankQueries, "most queries per /rerank request")
	fs.IntVar(&s.MaxDocs, "rerank-max-docs", rerank.DefaultMaxRerankDocs, "most candidate documents per /rerank request, all queries together (each is one model pass)")
	fs.Int64Var(&r.MaxBodyBytes, "rerank-max-body", rerank.DefaultMaxRerankBody, "largest /rerank request body in bytes")
	fs.IntVar(&s.DefaultTopK, "rerank-topk", rerank.DefaultRerankTopK, "documents kept per query when a /rerank request omits rerank_topk or sends 0 (Search-R1's default: 3)")
}

// rerankCmd scores documents (JSONL from --docs, default stdin) against
// one query and prints one JSON line {"id", "score"} per document
// (rerank.RunFile).
func rerankCmd(fs *flag.FlagSet) runFunc {
	var rc app.RerankConfig
	bindRerank(fs, &rc)
	query := fs.String("query", "", "the query (required)")
	docs := fs.String("docs", "-", "documents JSONL file ({id, contents} or {id, title, text} per line; - = stdin)")
	fs.StringVar(&rc.Model.ORTLib, "ort-lib", "", "ONNX Runtime shared library (default $ONNXRUNTIME_LIB)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if err := cli.Required(fs, "query"); err != nil {
			return err
		}
		open := func(ctx context.Context) (*rerank.Reranker, error) { return app.OpenReranker(ctx, rc) }
		err := jsonl.Pipe(*docs, "", stdout, func(r io.Reader, name string, w io.Writer) error {
			return rerank.RunFile(ctx, rerank.FileConfig{Query: *query, Name: name, Open: open}, r, w)
		})
		if errors.Is(err, rlsearch.ErrBadInput) {
			return usageErr("%v", err)
		}
		return err
	}
}
