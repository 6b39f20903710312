package main

import (
	"context"
	"flag"
	"io"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server/app"
)

// rewardCmd scores rollouts JSONL with one reward (reward.Open);
// --index serves the retrieval reward's searches.
func rewardCmd(fs *flag.FlagSet) runFunc {
	var f cmdflags.Reward
	f.Bind(fs)
	var idx cmdflags.Index
	idx.Bind(fs)
	kind := fs.String("kind", "", "reward: qa, rpl, search-p1, proretrieval or retrieval (required)")
	batch := fs.Int("batch", 256, "rollouts per scoring batch")
	in := fs.String("in", "-", "rollouts JSONL file (- = stdin)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		k, err := reward.ParseKind(*kind)
		if err != nil {
			return usageErr("--kind: %v", err)
		}
		if *batch < 1 {
			return usageErr("--batch %d must be at least 1", *batch)
		}
		o := f.Options()
		_, exec, done, err := app.OpenCollections(ctx, f.Collections, nil) // none without --collections
		if err != nil {
			return err
		}
		defer done()
		o.ProRetrieval.Executor = exec
		if idx.Cfg.Dir != "" { // the retrieval reward's searches
			ix, closeIx, err := idx.Open(ctx)
			if err != nil {
				return err
			}
			defer closeIx()
			o.Retrieval.Searcher = app.NewSearcher(ix.Retrievers(), ix, ix.DefaultRetriever())
		}
		s, cache, err := reward.Open(o)
		if err != nil {
			return err
		}
		var after func() error
		if cache != nil {
			after = cache.Save
		}
		return jsonl.Pipe(*in, "", stdout, func(r io.Reader, _ string, w io.Writer) error { return s.ScoreJSONL(ctx, k, *batch, r, w, after) })
	}
}
