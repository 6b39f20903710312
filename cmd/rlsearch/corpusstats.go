package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/corpus"
)

func runCorpusstats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corpusstats", flag.ContinueOnError)
	var workers int
	fs.IntVar(&workers, "workers", 0, "goroutines analyzing passages (0 = GOMAXPROCS)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rlsearch corpusstats [flags] FILE[@FROM:TO] ...\n\n"+
			"Term statistics of corpora (BM25's analyzed terms) side by side; FILE@FROM:TO measures rows [FROM, TO)\n"+
			"(0-based; either bound may be empty), e.g. gen.jsonl.zst@:18175 gen.jsonl.zst@18175:36350.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("no corpus file given")
	}
	var all []*gencorpus.CorpusStats
	for _, arg := range fs.Args() {
		path, from, to, err := corpus.ParseRows(arg)
		if err != nil {
			return usageErr("%v", err)
		}
		cfg := gencorpus.StatsConfig{Label: arg, Workers: workers, From: from, To: to}
		st, err := gencorpus.CollectStats(ctx, path, cfg)
		if err != nil {
			return err
		}
		all = append(all, st)
	}
	return gencorpus.WriteStatsTable(stdout, all)
}
