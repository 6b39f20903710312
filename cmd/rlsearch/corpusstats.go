package main

import (
	"context"
	"flag"
	"io"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/corpus"
)

// corpusstatsCmd prints gencorpus.CollectStats of each FILE[@FROM:TO].
func corpusstatsCmd(fs *flag.FlagSet) runFunc {
	workers := fs.Int("workers", 0, "goroutines analyzing passages (0 = GOMAXPROCS)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) == 0 {
			return usageErr("no corpus file given")
		}
		var all []*gencorpus.CorpusStats
		for _, arg := range args {
			path, from, to, err := corpus.ParseRows(arg)
			if err != nil {
				return usageErr("%v", err)
			}
			st, err := gencorpus.CollectStats(ctx, path, gencorpus.StatsConfig{Label: arg, Workers: *workers, From: from, To: to})
			if err != nil {
				return err
			}
			all = append(all, st)
		}
		return gencorpus.WriteStatsTable(stdout, all)
	}
}
