package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/index"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var (
		idx       indexFlags
		questions string
		retriever string
		ks        string
		batch     int
	)
	idx.bind(fs)
	fs.StringVar(&questions, "questions", defaultQuestions(), "question set JSONL with gold_passage_ids")
	fs.StringVar(&retriever, "retriever", "all", `"bm25", "e5" or "all" (every retriever the index serves)`)
	fs.StringVar(&ks, "k", "1,5,10,20", "cut-offs for recall@k")
	fs.IntVar(&batch, "batch", 64, "questions per retrieval call")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	kl, err := intList(ks)
	if err != nil {
		return err
	}
	qs, err := bench.LoadQuestions(questions)
	if err != nil {
		return err
	}
	ix, closeIx, err := idx.open(ctx)
	if err != nil {
		return err
	}
	defer closeIx()
	use := ix.RetrieverNames()
	if retriever != "all" {
		if _, err := ix.Retriever(retriever); err != nil {
			return usageErr("%v", err)
		}
		use = []string{retriever}
	}
	if err := checkGold(ix, qs, stderr); err != nil {
		return err
	}
	id := func(row int32) (string, error) {
		d, err := ix.Doc(row)
		return d.ID, err
	}
	fmt.Fprintf(stdout, "recall of gold passages: %s (%d questions), index %s (%d passages)\n", questions, len(qs), ix.Dir, ix.Len())
	for _, name := range use {
		reps, err := bench.EvalRecall(ctx, ix.Retrievers()[name], id, qs, kl, batch)
		if err != nil {
			return err
		}
		if err := bench.WriteRecallTable(stdout, name, kl, reps); err != nil {
			return err
		}
	}
	return nil
}

// checkGold makes sure the question set belongs to this index: every gold
// passage id should be a passage of it. All missing is an error (recall would
// be a meaningless 0); some missing is a warning.
func checkGold(ix *index.Index, qs []bench.Question, stderr io.Writer) error {
	missing, total, err := bench.GoldCoverage(qs, ix.Docs.Scan)
	switch {
	case err != nil:
		return err
	case missing == total:
		return fmt.Errorf("none of the %d gold passage ids is in the index %s: wrong question set or index?", total, ix.Dir)
	case missing > 0:
		fmt.Fprintf(stderr, "warning: %d of %d gold passage ids are not in the index; those passages count as not retrieved\n", missing, total)
	}
	return nil
}
