package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/client"
)

// searchCmd prints the ranked hits of questions, from the index or from a
// running server (one Search-R1 /retrieve request).
func searchCmd(fs *flag.FlagSet) runFunc {
	var idx indexFlags
	idx.bind(fs)
	server := fs.String("server", "", "ask a running server (e.g. http://127.0.0.1:8000) instead of opening --index")
	retriever := fs.String("retriever", "", `"bm25" or "e5" (default: e5 when --model is set, else bm25; with --server the server's default)`)
	k := fs.Int("k", 10, "results per question")
	questions := fs.String("questions", "", "also take questions from this JSONL question set (gold passages are marked *)")
	limit := fs.Int("limit", 5, "how many questions to take from --questions")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if *k <= 0 {
			return usageErr("-k must be positive, got %d", *k)
		}
		if *server != "" && idx.cfg.Dir != "" {
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
		texts := make([]string, len(qs))
		for i, q := range qs {
			texts[i] = q.Question
		}
		var results [][]client.Result
		if *server != "" {
			var err error
			if results, err = client.Retrieve(ctx, *server, *retriever, texts, *k); errors.Is(err, client.ErrBadURL) {
				return usageErr("--server: %v", err)
			} else if err != nil {
				return err
			}
		} else {
			ix, closeIx, err := idx.open(ctx)
			if err != nil {
				return err
			}
			defer closeIx()
			if results, err = ix.Search(ctx, *retriever, texts, *k); err != nil {
				return err
			}
		}
		for i, q := range qs {
			fmt.Fprintf(stdout, "Q: %s\n", q.Question)
			if len(results[i]) == 0 {
				fmt.Fprintf(stdout, "   (no results)\n")
			}
			for j, r := range results[i] {
				mark := " "
				if slices.Contains(q.GoldIDs, r.Document.ID) {
					mark = "*"
				}
				fmt.Fprintf(stdout, " %s%2d. %8.4f  %s  [%s]\n", mark, j+1, r.Score, r.Document.Title(), r.Document.ID)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	}
}
