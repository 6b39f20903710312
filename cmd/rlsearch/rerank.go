package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/rerank"
)

// rerankFlags configure the reranker behind POST /rerank (serve) and the
// rerank command.
type rerankFlags struct {
	dir         string
	sessions    int
	maxLength   int
	batch       int
	batchTokens int
	wait        time.Duration
	instruction string
	check       bool
	topK        int
	maxQueries  int
	maxDocs     int
	maxBody     int64
}

func (f *rerankFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "reranker", os.Getenv("RERANKER"), "reranker model directory (Qwen3-Reranker or cross-encoder ONNX export with rlsearch.json); default $RERANKER; empty = no /rerank")
	fs.IntVar(&f.sessions, "rerank-sessions", 0, "ONNX Runtime sessions for the reranker (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&f.batchTokens, "rerank-batch-tokens", 0, "most tokens per reranker run, batch size × longest pair (0 = 8192); a longer pair runs alone")
	fs.IntVar(&f.maxLength, "rerank-max-length", 0, "token budget per (query, document) pair (0 = model config, else 8192 for Qwen3, 512 for cross-encoders)")
	fs.IntVar(&f.batch, "rerank-batch", 0, "pairs per reranker run; concurrent requests share batches (0 = 16)")
	fs.DurationVar(&f.wait, "rerank-wait", 0, "how long a reranker batch waits to fill (0 = 2ms)")
	fs.StringVar(&f.instruction, "rerank-instruction", "", "Qwen3-Reranker instruction (default: the model card's web search instruction)")
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
	r, err := rerank.Open(rerank.Config{Dir: f.dir, ORTLib: ortLib, Sessions: f.sessions, MaxLength: f.maxLength,
		BatchSize: f.batch, MaxBatchTokens: f.batchTokens, BatchWait: f.wait, Instruction: f.instruction})
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

// runRerank scores documents (JSONL from --docs, default stdin:
// {"id", "contents"} or {"id", "title", "text"}) against one query and prints one JSON line per
// document, in input order: {"id", "score"}. Nothing is printed unless
// every score is finite: a NaN or ±Inf score fails the command with an
// error naming the query and the document (its line and id).
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
	in, name, err := jsonl.Open(docsPath)
	if err != nil {
		return err
	}
	defer in.Close()
	docs, lines, err := rerank.ReadDocuments(in, name)
	if errors.Is(err, rlsearch.ErrBadInput) {
		return usageErr("%v", err)
	} else if err != nil {
		return err
	}
	r, err := f.open(ctx, ortLib)
	if err != nil {
		return err
	}
	defer r.Close()
	scores, err := r.Rerank(ctx, query, docs)
	var nf *rerank.NonFiniteError
	if errors.As(err, &nf) && nf.Doc >= 0 && nf.Doc < len(lines) {
		return fmt.Errorf("%s line %d: %w", docsPath, lines[nf.Doc], err)
	}
	if err != nil {
		return err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for i, d := range docs {
		if err := enc.Encode(map[string]any{"id": d.ID, "score": scores[i]}); err != nil {
			return fmt.Errorf("document %d (id %q, %s line %d): %w", i, d.ID, docsPath, lines[i], err)
		}
	}
	_, err = stdout.Write(out.Bytes())
	return err
}
