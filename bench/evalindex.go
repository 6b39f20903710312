package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/index"
)

// IndexEvalConfig is one `rlsearch-bench eval` run over an open index.
type IndexEvalConfig struct {
	Questions string // question set path, named in the header
	Retriever string // a served retriever, or "all" (or "") for every one
	Ks        []int  // recall cut-offs; at least one
	Batch     int    // questions per retrieval call (0 = 64)
}

// EvalIndex checks that qs belongs to ix (GoldCoverage: every gold passage
// id should be a passage of it; all missing is an error, since recall
// would be a meaningless 0, some missing a warning on warn), then writes
// recall@k of gold passages (EvalRecall, WriteRecallTable) for each
// retriever of cfg to out. Errors: index.ErrNoRetriever (wrapped) for a
// retriever ix does not serve, the gold check's, the retrievers'.
func EvalIndex(ctx context.Context, ix *index.Index, qs []Question, cfg IndexEvalConfig, out, warn io.Writer) error {
	use := ix.RetrieverNames()
	if cfg.Retriever != "all" && cfg.Retriever != "" {
		if _, err := ix.Retriever(cfg.Retriever); err != nil {
			return err
		}
		use = []string{cfg.Retriever}
	}
	missing, total, err := GoldCoverage(qs, ix.Docs.Scan)
	switch {
	case err != nil:
		return err
	case missing == total:
		return fmt.Errorf("none of the %d gold passage ids is in the index %s: wrong question set or index?", total, ix.Dir)
	case missing > 0:
		fmt.Fprintf(warn, "warning: %d of %d gold passage ids are not in the index; those passages count as not retrieved\n", missing, total)
	}
	id := func(row int32) (string, error) {
		d, err := ix.Doc(row)
		return d.ID, err
	}
	fmt.Fprintf(out, "recall of gold passages: %s (%d questions), index %s (%d passages)\n", cfg.Questions, len(qs), ix.Dir, ix.Len())
	for _, name := range use {
		reps, err := EvalRecall(ctx, ix.Retrievers()[name], id, qs, cfg.Ks, cfg.Batch)
		if err != nil {
			return err
		}
		if err := WriteRecallTable(out, name, cfg.Ks, reps); err != nil {
			return err
		}
	}
	return nil
}

// Texts is corpus.Texts.
func Texts(qs []Question) []string { return corpus.Texts(qs) }
