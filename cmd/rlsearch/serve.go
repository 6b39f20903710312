package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/sdk"
)

// serveFlags configure the HTTP server; bench uses the same ones.
type serveFlags struct {
	idx       indexFlags
	rr        rerankFlags
	cfg       server.Config // the limits; newServer sets the rest
	addr      string
	retriever string
	batchMax  int
	batchWait time.Duration
	// collections are the hybrid collections of /v1/hybrid/execute;
	// policyTokenizer counts the observation tokens of programs (Qwen3
	// BPE); budgets and programMemMiB bound programs (0: sdk defaults).
	collections, policyTokenizer string
	budgets                      sdk.Budgets
	programMemMiB                int64
}

func (s *serveFlags) bind(fs *flag.FlagSet) {
	s.idx.bind(fs)
	fs.StringVar(&s.collections, "collections", "", "hybrid collections for POST /v1/hybrid/execute: one collection directory or a directory of them (see 'rlsearch hybrid build')")
	fs.BoolVar(&s.idx.verifyDocs, "verify-docs", false, "check every docstore block's CRC at startup (one read of docs.zst: 9 s for 21M passages); without it each block's CRC is checked when the block is first read, and `rlsearch verify` checks every file")
	fs.StringVar(&s.policyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the programs' 2,048-token observation cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.Uint64Var(&s.budgets.MaxSteps, "program-max-steps", 0, "Starlark step budget of each program, builtin work included (0 = 1,000,000)")
	fs.Int64Var(&s.programMemMiB, "program-max-memory", 0, "memory budget of each program in MiB: bytes its operations are charged before they run (0 = 64)")
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8000", "listen address (Search-R1's retrieval server uses port 8000)")
	fs.StringVar(&s.retriever, "retriever", "", `default retriever when a request names none: "bm25" or "e5" (default e5 when --model is set, else bm25)`)
	fs.IntVar(&s.cfg.MaxTopK, "max-topk", server.DefaultMaxTopK, "largest accepted topk")
	fs.IntVar(&s.cfg.MaxResults, "max-results", server.DefaultMaxResults, "most hits per request, queries x topk (413 above it)")
	fs.IntVar(&s.cfg.MaxQueries, "max-queries", server.DefaultMaxQueries, "most queries per request (Search-R1 sends every active rollout's query in one request)")
	fs.IntVar(&s.cfg.ChunkQueries, "chunk-queries", server.DefaultChunkQueries, "most queries of one /retrieve request searched per retriever call; larger requests are searched chunk after chunk before the response streams")
	fs.Int64Var(&s.cfg.MaxBodyBytes, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes")
	fs.IntVar(&s.batchMax, "batch-max", 64, "most queries the e5 batching queue merges into one encoder call")
	fs.DurationVar(&s.batchWait, "batch-wait", 2*time.Millisecond, "how long the e5 batching queue waits to fill a batch")
	s.rr.bind(fs)
}

// newServer opens the index, its e5 batching queue, the reranker and the
// endpoints' dependencies, and builds the server. closeAll releases them
// all; on error nothing stays open.
func (s *serveFlags) newServer(ctx context.Context, logger *slog.Logger) (_ *server.Server, _ *index.Index, _ func(), err error) {
	if s.programMemMiB < 0 || s.programMemMiB > 1<<20 {
		return nil, nil, nil, usageErr("--program-max-memory %d MiB is out of range (0 to 1048576)", s.programMemMiB)
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	ix, closeIx, err := s.idx.open(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, closeIx)
	cfg := s.cfg
	cfg.Retrievers, cfg.Docs, cfg.Health, cfg.Logger = ix.Retrievers(), ix, ix.Health, logger
	if e5, ok := cfg.Retrievers["e5"]; ok {
		b := server.NewBatcher(e5, s.batchMax, s.batchWait)
		cfg.Retrievers["e5"] = b
		closers = append(closers, func() { b.(io.Closer).Close() })
	}
	cfg.Default = cmp.Or(s.retriever, ix.DefaultRetriever())
	if _, ok := cfg.Retrievers[cfg.Default]; !ok {
		return nil, nil, nil, usageErr("--retriever %q is not served by this index (have %v; e5 needs --model)", cfg.Default, ix.RetrieverNames())
	}
	deps, rr, closeDeps, err := openDeps(ctx, &s.rr, s.idx.model.cfg.ORTLib, s.policyTokenizer) // --reranker: POST /rerank and rerank() in programs
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, closeDeps)
	deps.budgets = sdk.Budgets{MaxSteps: s.budgets.MaxSteps, MaxMemoryBytes: s.programMemMiB << 20}
	deps.collections = s.collections
	extra, err := extraEndpoints(ix, deps)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := s.rr.mount(rr, extra, logger); err != nil {
		return nil, nil, nil, err
	}
	cfg.Extra = extra
	srv, err := server.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return srv, ix, closeAll, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var s serveFlags
	s.bind(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	srv, ix, closeAll, err := s.newServer(ctx, logger)
	if err != nil {
		return err
	}
	defer closeAll()
	logger.Info("index loaded", "dir", ix.Dir, "passages", ix.Len(), "retrievers", ix.RetrieverNames(), "backend", ix.SearchBackend(), "open_seconds", ix.OpenDuration.Seconds())
	return srv.ListenAndServe(ctx, s.addr, func(a net.Addr) {
		fmt.Fprintf(stdout, "listening on http://%s\n", a)
	})
}
