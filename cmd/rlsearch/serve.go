package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/cache"
)

// serveFlags configure the server (app.Config); bench uses the same ones.
type serveFlags struct {
	idx           indexFlags
	cfg           app.Config // Index, Logger and Reward are set by newServer
	addr          string
	programMemMiB int64
}

func (s *serveFlags) bind(fs *flag.FlagSet) {
	c := &s.cfg
	s.idx.bind(fs)
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
	fs.Int64Var(&c.CacheBytes, "cache-bytes", cache.DefaultMaxBytes, "result cache shared by /retrieve, programs, mutate and rewards, in bytes (LRU; keyed by index build, retriever, topk and the analysed BM25 query or exact dense query); 0 = off")
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
	var s serveFlags
	s.bind(fs)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		logger := slog.New(slog.NewJSONHandler(stderr, nil))
		srv, ix, closeAll, err := s.newServer(ctx, logger)
		if err != nil {
			return err
		}
		defer closeAll()
		logger.Info("index loaded", "dir", ix.Dir, "passages", ix.Len(), "retrievers", ix.RetrieverNames(), "backend", ix.SearchBackend(), "open_seconds", ix.OpenDuration.Seconds())
		return srv.ListenAndServe(ctx, s.addr, func(a net.Addr) { fmt.Fprintf(stdout, "listening on http://%s\n", a) })
	}
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
	fs.StringVar(&c.Provider, "rerank-device", "cpu", "where a Qwen3-Reranker runs: cpu (ONNX Runtime), gpu or gpu:N (our fp16 forward pass; an error when that GPU cannot run it), auto (GPU 0 when usable, else cpu); /healthz says where and why")
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
