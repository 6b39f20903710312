package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/rerank"
)

// rerankFlags configure the reranker behind POST /rerank (serve) and the
// rerank command: the model (cfg, opened by open) and the endpoint's
// limits (mount).
type rerankFlags struct {
	cfg                       rerank.Config // ORTLib comes from open's caller
	dir                       string        // --reranker (cfg.Dir)
	check                     bool
	topK, maxQueries, maxDocs int
	maxBody                   int64
}

func (f *rerankFlags) bind(fs *flag.FlagSet) {
	c := &f.cfg
	fs.StringVar(&f.dir, "reranker", os.Getenv("RERANKER"), "reranker model directory (Qwen3-Reranker or cross-encoder ONNX export with rlsearch.json); default $RERANKER; empty = no /rerank")
	fs.IntVar(&c.Sessions, "rerank-sessions", 0, "ONNX Runtime sessions for the reranker (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&c.MaxBatchTokens, "rerank-batch-tokens", 0, "most tokens per reranker run, batch size × longest pair (0 = 8192); a longer pair runs alone")
	fs.IntVar(&c.MaxLength, "rerank-max-length", 0, "token budget per (query, document) pair (0 = model config, else 8192 for Qwen3, 512 for cross-encoders)")
	fs.IntVar(&c.BatchSize, "rerank-batch", 0, "pairs per reranker run; concurrent requests share batches (0 = 16)")
	fs.DurationVar(&c.BatchWait, "rerank-wait", 0, "how long a reranker batch waits to fill (0 = 2ms)")
	fs.StringVar(&c.Instruction, "rerank-instruction", "", "Qwen3-Reranker instruction (default: the model card's web search instruction)")
	fs.BoolVar(&f.check, "rerank-check", true, "at startup require the reranker to score a relevant passage above irrelevant ones (turn off for random-weight test models)")
	fs.IntVar(&f.maxQueries, "rerank-max-queries", rerank.DefaultMaxRerankQueries, "most queries per /rerank request")
	fs.IntVar(&f.maxDocs, "rerank-max-docs", rerank.DefaultMaxRerankDocs, "most candidate documents per /rerank request, all queries together (each is one model pass)")
	fs.Int64Var(&f.maxBody, "rerank-max-body", rerank.DefaultMaxRerankBody, "largest /rerank request body in bytes")
	fs.IntVar(&f.topK, "rerank-topk", rerank.DefaultRerankTopK, "documents kept per query when a /rerank request omits rerank_topk or sends 0 (Search-R1's default: 3)")
}

// open loads the reranker (nil when --reranker is empty) and runs the
// startup check when asked.
func (f *rerankFlags) open(ctx context.Context, ortLib string) (*rerank.Reranker, error) {
	if f.dir == "" {
		return nil, nil
	}
	cfg := f.cfg
	cfg.Dir, cfg.ORTLib = f.dir, ortLib
	r, err := rerank.Open(cfg)
	if err != nil {
		return nil, err
	}
	if f.check {
		if err := rerank.Check(ctx, r); err != nil {
			r.Close()
			return nil, fmt.Errorf("%w (start with --rerank-check=false to serve a test model anyway)", err)
		}
	}
	return r, nil
}

// mount opens the reranker and adds POST /rerank to extra; the closer
// releases the reranker. Without --reranker it mounts nothing.
func (f *rerankFlags) mount(r *rerank.Reranker, extra map[string]server.Endpoint, logger *slog.Logger) error {
	if r == nil {
		return nil
	}
	if f.maxBody < 0 {
		return usageErr("--rerank-max-body %d is negative", f.maxBody)
	}
	svc, err := rerank.NewService(r, rerank.ServiceConfig{DefaultTopK: f.topK, MaxQueries: f.maxQueries, MaxDocs: f.maxDocs})
	if err != nil {
		return err
	}
	// Search-R1's clients send extras: unknown keys pass, near-misses do not.
	extra["/rerank"] = server.JSON(svc.Serve, server.EndpointOptions{MaxBodyBytes: f.maxBody, IgnoreUnknown: true})
	logger.Info("reranker loaded", "dir", f.dir, "name", r.Name(), "kind", r.Kind(), "max_length", r.MaxLength(), "startup_check", f.check)
	return nil
}

// runRerank scores documents (JSONL from --docs, default stdin) against
// one query and prints one JSON line {"id", "score"} per document
// (rerank.RunFile).
func runRerank(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rerank", flag.ContinueOnError)
	var f rerankFlags
	f.bind(fs)
	var query, ortLib, docsPath string
	fs.StringVar(&query, "query", "", "the query (required)")
	fs.StringVar(&docsPath, "docs", "-", "documents JSONL file ({id, contents} or {id, title, text} per line; - = stdin)")
	fs.StringVar(&ortLib, "ort-lib", "", "ONNX Runtime shared library (default $ONNXRUNTIME_LIB)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.dir == "" {
		return usageErr("--reranker is required")
	}
	if query == "" {
		return usageErr("--query is required")
	}
	err := withFiles(docsPath, "", stdout, func(r io.Reader, name string, w io.Writer) error {
		return rerank.RunFile(ctx, rerank.FileConfig{Query: query, Name: name, Open: func(ctx context.Context) (*rerank.Reranker, error) {
			return f.open(ctx, ortLib)
		}}, r, w)
	})
	if errors.Is(err, rlsearch.ErrBadInput) {
		return usageErr("%v", err)
	}
	return err
}
