package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/app"
	"github.com/rlsearch/rlsearch/rerank"
)

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
		if err := required(fs, "query"); err != nil {
			return err
		}
		open := func(ctx context.Context) (*rerank.Reranker, error) { return app.OpenReranker(ctx, rc) }
		err := withFiles(*docs, "", stdout, func(r io.Reader, name string, w io.Writer) error {
			return rerank.RunFile(ctx, rerank.FileConfig{Query: *query, Name: name, Open: open}, r, w)
		})
		if errors.Is(err, rlsearch.ErrBadInput) {
			return usageErr("%v", err)
		}
		return err
	}
}
