package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/client"
)

// searchCmd prints the ranked hits of questions (bench.WriteHits), from
// the index or from a running server (one Search-R1 /retrieve request).
func searchCmd(fs *flag.FlagSet) runFunc {
	var idx indexFlags
	idx.bind(fs)
	server := fs.String("server", "", "ask a running server (e.g. http://127.0.0.1:8000) instead of opening --index")
	retriever := fs.String("retriever", "", `"bm25" or "e5" (default: e5 when --model is set, else bm25; with --server the server's default)`)
	k := fs.Int("k", 10, "results per question")
	questions := fs.String("questions", "", "also take questions from this JSONL question set (gold passages are marked *)")
	limit := fs.Int("limit", 5, "how many questions to take from --questions")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
		switch {
		case *k <= 0:
			return usageErr("-k must be positive, got %d", *k)
		case *server != "" && idx.cfg.Dir != "":
			return usageErr("give either --index (search locally) or --server (ask a running server), not both")
		}
		var qs []bench.Question
		for _, a := range args {
			qs = append(qs, bench.Question{Question: a})
		}
		if *questions != "" {
			set, err := bench.LoadQuestions(*questions)
			if err != nil {
				return err
			}
			qs = append(qs, set[:min(*limit, len(set))]...)
		}
		if len(qs) == 0 {
			return usageErr("no question given (pass questions as arguments or --questions FILE)")
		}
		var results [][]client.Result
		if *server != "" {
			if results, err = client.Retrieve(ctx, *server, *retriever, bench.Texts(qs), *k); errors.Is(err, client.ErrBadURL) {
				return usageErr("--server: %v", err)
			}
		} else {
			ix, closeIx, oerr := idx.open(ctx)
			if oerr != nil {
				return oerr
			}
			defer closeIx()
			results, err = ix.Search(ctx, *retriever, bench.Texts(qs), *k)
		}
		if err == nil {
			bench.WriteHits(stdout, qs, results)
		}
		return err
	}
}

// evalCmd prints recall@k of gold passages (bench.EvalIndex).
func evalCmd(fs *flag.FlagSet) runFunc {
	var (
		idx indexFlags
		cfg bench.IndexEvalConfig
	)
	idx.bind(fs)
	fs.StringVar(&cfg.Questions, "questions", defaultQuestions(), "question set JSONL with gold_passage_ids")
	fs.StringVar(&cfg.Retriever, "retriever", "all", `"bm25", "e5" or "all" (every retriever the index serves)`)
	ks := fs.String("k", "1,5,10,20", "cut-offs for recall@k")
	fs.IntVar(&cfg.Batch, "batch", 64, "questions per retrieval call")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) (err error) {
		if cfg.Ks, err = intList(*ks); err != nil {
			return err
		}
		qs, err := bench.LoadQuestions(cfg.Questions)
		if err != nil {
			return err
		}
		ix, closeIx, err := idx.open(ctx)
		if err != nil {
			return err
		}
		defer closeIx()
		return bench.EvalIndex(ctx, ix, qs, cfg, stdout, stderr)
	}
}
