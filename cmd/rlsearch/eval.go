package main

import (
	"context"
	"flag"
	"io"

	"github.com/rlsearch/rlsearch/bench"
)

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
