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
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/router"
)

// serveCmd serves one index (or several corpora, or router mode over
// shard servers) on --addr and every --listen until ctx is cancelled.
func serveCmd(fs *flag.FlagSet) runFunc {
	var (
		s  cmdflags.Serve
		rf routerFlags
	)
	s.Bind(fs)
	rf.bind(fs)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		logger := slog.New(slog.NewJSONHandler(stderr, nil))
		addrSet := false
		fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
		for _, l := range s.Listen {
			_, _, corpus, err := server.ParseListen(l)
			if err != nil {
				return usageErr("%v", err)
			}
			known := corpus == "" || (rf.shards != "" && corpus == app.DefaultCorpus)
			for _, c := range s.Idx.Corpora {
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
			return serveListeners(ctx, svc.Server, corpora, s.Addr, addrSet, s.Listen, stdout)
		}
		if len(s.Idx.Corpora) == 0 {
			return usageErr("serve needs --index DIR (an index, or one shard of a sharded build; NAME=DIR, repeatable, for several corpora) or --shards URL,... (a router over shard servers)")
		}
		if len(s.Idx.Corpora) > 1 && (s.Cfg.CacheLoad != "" || s.CacheSave != "") {
			return usageErr("--cache-load and --cache-save serve one --index (a cache file is keyed by one index's fingerprint)")
		}
		m, err := newMulti(ctx, &s, logger)
		if err != nil {
			return err
		}
		defer m.Close()
		for i, svc := range m.Services {
			ix := svc.Index
			logger.Info("index loaded", "corpus", m.Corpora.Names()[i], "dir", ix.Dir, "passages", ix.Len(), "retrievers", ix.RetrieverNames(), "backend", ix.SearchBackend(), "open_seconds", ix.OpenDuration.Seconds())
		}
		err = serveListeners(ctx, m.Services[0].Server, m.Corpora, s.Addr, addrSet, s.Listen, stdout)
		if s.CacheSave != "" {
			svc := m.Services[0]
			if serr := svc.SaveCache(s.CacheSave); serr != nil {
				err = errors.Join(err, fmt.Errorf("--cache-save: %w", serr))
			} else {
				logger.Info("result cache saved", "file", s.CacheSave, "entries", svc.Cache.Stats().Entries, "fingerprint", svc.Fingerprint.String())
			}
		}
		return err
	}
}

// newMulti assembles one service per --index corpus (app.NewMulti) with
// the rewards configured from the environment.
func newMulti(ctx context.Context, s *cmdflags.Serve, logger *slog.Logger) (*app.Multi, error) {
	cfg, err := s.AppConfig(logger)
	if err != nil {
		return nil, err
	}
	m, err := app.NewMulti(ctx, cfg, s.Idx.Corpora)
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
	cmdflags.Off(fs, &c.Retries, "shard-retries", router.DefaultRetries, "router: further attempts after a failed shard request, on another replica when there is one (0 = the default, 2; off or -1 = none)")
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
func (f *routerFlags) newRouter(ctx context.Context, s *cmdflags.Serve, logger *slog.Logger) (*app.Service, error) {
	if s.Idx.Cfg.Dir != "" {
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
	mem, err := s.ProgramMemBytes()
	if err != nil {
		return nil, err
	}
	sc := s.Cfg
	rc := app.RouterConfig{Router: c, Reranker: sc.Reranker, Server: sc.Server, Retriever: sc.Retriever, Collections: sc.Collections,
		PolicyTokenizer: sc.PolicyTokenizer, Budgets: sc.Budgets, Reward: cmdflags.RewardEnv(), UI: sc.UI, Logger: logger}
	rc.Budgets.MaxMemoryBytes = mem
	rc.Reranker.Model.ORTLib = cmp.Or(rc.Reranker.Model.ORTLib, s.Idx.Cfg.Model.ORTLib)
	if s.Idx.Cfg.Model.Dir != "" {
		logger.Warn("router mode ignores --model ($MODEL): every shard server encodes its queries with its own", "model", s.Idx.Cfg.Model.Dir)
	}
	svc, err := app.NewRouter(ctx, rc)
	if errors.Is(err, router.ErrConfig) {
		return nil, usageErr("%v", err)
	}
	return svc, err
}

// rerankCmd scores documents (JSONL from --docs, default stdin) against
// one query and prints one JSON line {"id", "score"} per document
// (rerank.RunFile).
func rerankCmd(fs *flag.FlagSet) runFunc {
	var rc app.RerankConfig
	cmdflags.Rerank(fs, &rc)
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
