package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/report"
	"github.com/rlsearch/rlsearch/bench/suites"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/corpus"
)

// suitesCmd is `rlsearch-bench run [--suites ...]`: flags to
// bench.Options, bench.Run, then report.WriteDir (bench/README.md
// documents it all).
func suitesCmd(fs *flag.FlagSet) runFunc {
	all := suites.All()
	var o bench.Options
	var names, threads, out string
	var sets, peerRows cmdflags.Multi
	fs.StringVar(&names, "suites", strings.Join(suites.Default(), ","), "comma-separated suites to run, of: "+strings.Join(bench.SuiteNames(all), ","))
	fs.IntVar(&o.Reps, "reps", 3, "repetitions of every configuration (the spread is over them)")
	fs.BoolVar(&o.Quick, "quick", false, "smaller configuration sets and 100ms repetitions (a smoke run)")
	fs.DurationVar(&o.MinTime, "min-time", 0, "least time of one repetition (0 = 1s, 100ms with --quick)")
	fs.StringVar(&o.Data, "data", corpus.DataDir(), "shared dataset directory")
	fs.StringVar(&o.Work, "work", filepath.Join("out", "bench-work"), "directory for built indexes, generated corpora and models (reused)")
	fs.StringVar(&threads, "threads", "", "comma-separated thread counts (GOMAXPROCS) of the suites that vary them (default 1 and all cores)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of every random choice")
	fs.Var(&sets, "set", "suite setting suite.key=value (repeatable), e.g. bm25.gen=1000000, flat.data=bge-base, encode.model=DIR")
	fs.BoolVar(&o.Peers, "peers", true, "run the registered peers (Lucene, faiss, Python) of each suite")
	fs.BoolVar(&o.Interleave, "interleave", false, "run each repetition of ours, then each peer's, before the next (peers cache their built indexes): ours and the peers share the machine's state")
	fs.Var(&peerRows, "peer-rows", "merge a peer runner's output (a JSON array of bench.Row) into the report (repeatable)")
	fs.StringVar(&out, "out", filepath.Join("out", "bench"), "output directory: report.json, report.md, plots/")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		o.Suites = strings.Split(names, ",")
		if threads != "" {
			for _, t := range strings.Split(threads, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(t))
				if err != nil || n < 1 {
					return usageErr("--threads %q: want positive integers", threads)
				}
				o.Threads = append(o.Threads, n)
			}
		}
		o.Set = map[string]string{}
		for _, kv := range sets {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.Contains(k, ".") {
				return usageErr("--set %q: want suite.key=value", kv)
			}
			o.Set[k] = v
		}
		o.Progress = stderr
		rep, err := bench.Run(ctx, o, all)
		if err != nil {
			return err
		}
		if err := mergePeerRows(rep, peerRows); err != nil {
			return err
		}
		files, err := report.WriteDir(out, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "bench: %d rows, %d skipped, %s wall; wrote %s, %s and %d plot files in %s\n",
			len(rep.Rows), len(rep.Skipped), time.Duration(rep.WallSeconds*float64(time.Second)).Round(time.Second),
			files.JSON, files.Markdown, len(files.Plots), out)
		return nil
	}
}

// compareCmd is `rlsearch-bench compare OLD NEW`.
func compareCmd(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 2 {
			return usageErr("want OLD.json NEW.json, got %d arguments", len(args))
		}
		old, err := bench.ReadReport(args[0])
		if err != nil {
			return err
		}
		cur, err := bench.ReadReport(args[1])
		if err != nil {
			return err
		}
		diffs, unmatched := report.Compare(old, cur)
		return report.WriteCompare(stdout, diffs, unmatched)
	}
}

// renderCmd is `rlsearch-bench render REPORT.json [--peer-rows F] --out
// DIR`: report.md and the plots again from a report, with peer rows
// measured separately merged in.
func renderCmd(fs *flag.FlagSet) runFunc {
	var peerRows cmdflags.Multi
	fs.Var(&peerRows, "peer-rows", "merge a peer runner's output (a JSON array of bench.Row) into the report (repeatable)")
	out := fs.String("out", "", "output directory (required; may be the report's own)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 1 {
			return usageErr("want one REPORT.json, got %d arguments", len(args))
		}
		rep, err := bench.ReadReport(args[0])
		if err != nil {
			return err
		}
		if err := mergePeerRows(rep, peerRows); err != nil {
			return err
		}
		files, err := report.WriteDir(*out, rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "bench: wrote %s, %s and %d plot files in %s\n", files.JSON, files.Markdown, len(files.Plots), *out)
		return nil
	}
}

// mergePeerRows appends the rows of every peer runner's output file to rep.
func mergePeerRows(rep *bench.Report, files []string) error {
	for _, p := range files {
		pr, err := bench.ReadReport(p)
		if err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, pr.Rows...)
	}
	return nil
}
