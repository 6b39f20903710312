// Command rlsearch-bench measures and evaluates what cmd/rlsearch serves:
// the benchmark suites next to their peers (run, compare, render), the
// single-index measurement of scripts/bench-scale.sh (index), recall@k of
// gold passages (eval), the generated corpora (gencorpus, corpusstats),
// the mutation experiment (mutate-eval) and the hybrid benchmarks
// (hybrid-gen, hybrid-eval). `rlsearch-bench` alone lists the commands;
// `rlsearch-bench CMD -h` lists a command's flags.
//
// It is a binary of its own so that the serving binary links neither the
// harness nor its plotting stack (cmd/rlsearch TestServingBinaryDeps); the
// flag groups both bind are cmd/internal/cmdflags's. main only turns flags
// into configurations and calls the packages (bench, bench/suites,
// bench/report, bench/indexbench, bench/gencorpus, bench/mutateeval,
// bench/hybrideval).
package main

import (
	"context"
	"io"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server/app"
)

type runFunc = cli.RunFunc

func commands() []cli.Command {
	return []cli.Command{
		{Name: "run", Summary: "run the benchmark suites next to their peers: report.json, report.md and plots (bench/README.md)", Flags: suitesCmd},
		{Name: "compare", Summary: "benchstat-style differences between two reports", Flags: compareCmd, Args: "OLD.json NEW.json"},
		{Name: "render", Summary: "report.md and the plots again from a report, with peer rows merged in", Flags: renderCmd, Args: "REPORT.json", Required: []string{"out"}},
		{Name: "index", Summary: "measure one index directory: open time, BM25 and dense queries/s, /retrieve requests/s, peak memory", Flags: indexCmd, Required: []string{"index"}},
		{Name: "eval", Summary: "print recall@k of gold passages for a question set", Flags: evalCmd, Required: []string{"index"}},
		{Name: "gencorpus", Summary: "generate a wiki-shaped corpus of any size from a real seed corpus (topical or unigram model)", Flags: gencorpusCmd, Required: []string{"n", "out"}},
		{Name: "corpusstats", Summary: "print term statistics of corpora side by side (lengths, tf>1, df, co-occurrence)", Flags: corpusstatsCmd, Args: "FILE[@FROM:TO] ...",
			About: "Term statistics of corpora (BM25's analyzed terms) side by side; FILE@FROM:TO measures rows [FROM, TO)\n(0-based; either bound may be empty), e.g. gen.jsonl.zst@:18175 gen.jsonl.zst@18175:36350."},
		{Name: "mutate-eval", Summary: "for every question, a single-query width-3 BM25 program of its text, searched for a verified RPL mutation: a JSON summary", Flags: mutateEvalCmd, Required: []string{"index"}},
		{Name: "hybrid-gen", Summary: "generate hybrid benchmark instances JSONL (L1/L2/L3), optionally verbalized by a template or an LLM", Flags: hybridGenCmd, Required: []string{"collection"}},
		{Name: "hybrid-eval", Summary: "Hit@1, Hit@3, MRR, NDCG@3 and execution success of predicted (default: gold) programs, per level and modality", Flags: hybridEvalCmd, Required: []string{"collection", "instances"}},
	}
}

func main() { cli.Main(run) }

// usageErrs are the errors of the packages that mean bad flags or
// arguments: exit status 2, as a usage error of cmd.
var usageErrs = []error{app.ErrConfig, index.ErrNoRetriever, gencorpus.ErrBadConfig, mutateeval.ErrNoQuestions, reward.ErrConfig}

// usageErr is package cli's usage error (exit status 2).
var usageErr = cli.Usagef

// run executes one command and returns the process exit code: 0 success
// (or help), 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, "rlsearch-bench", commands(), args, stdout, stderr, usageErrs...)
}
