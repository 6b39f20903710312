package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
)

// rowsSuffix matches the optional "@FROM:TO" row range of a corpusstats
// argument (either bound may be empty).
var rowsSuffix = regexp.MustCompile(`@(\d*):(\d*)$`)

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
		cfg := gencorpus.StatsConfig{Label: arg, Workers: workers}
		path := arg
		if m := rowsSuffix.FindStringSubmatch(arg); m != nil {
			if _, err := os.Stat(arg); err != nil { // a file literally named x@1:2 wins
				path = arg[:len(arg)-len(m[0])]
				var err error
				if m[1] != "" {
					if cfg.From, err = strconv.Atoi(m[1]); err != nil {
						return usageErr("bad row range in %q: %v", arg, err)
					}
				}
				if m[2] != "" {
					if cfg.To, err = strconv.Atoi(m[2]); err != nil {
						return usageErr("bad row range in %q: %v", arg, err)
					}
					if cfg.To <= cfg.From {
						return usageErr("bad row range in %q: want FROM < TO", arg)
					}
				}
			}
		}
		if i := strings.LastIndexByte(path, '@'); i >= 0 && path == arg {
			if _, err := os.Stat(arg); err != nil {
				return usageErr("bad row range %q in %q: want @FROM:TO with FROM < TO, both 0-based row numbers (either may be empty)", arg[i:], arg)
			}
		}
		st, err := gencorpus.CollectStats(ctx, path, cfg)
		if err != nil {
			return err
		}
		all = append(all, st)
	}
	return gencorpus.WriteStatsTable(stdout, all)
}
