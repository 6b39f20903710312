// Command rlsearch builds and serves retrieval indexes for search-agent RL:
// BM25 and E5 dense retrieval over a Search-R1 / FlashRAG corpus, behind
// Search-R1's /retrieve API, with retrieval programs, rerankers, rewards
// and hybrid collections beside it. `rlsearch` alone lists the commands
// (the table in commands); `rlsearch CMD -h` lists a command's flags.
//
// main only turns flags into configurations and calls the packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"index", "build an index directory from a corpus JSONL", runIndex},
		{"verify", "check every checksum, block and count of an index, collection, shard or other stored file", runVerify},
		{"serve", "serve Search-R1's POST /retrieve, GET /healthz, GET /metrics", runServe},
		{"search", "print ranked titles and scores for questions", runSearch},
		{"eval", "print recall@k of gold passages for a question set", runEval},
		{"bench", "measure query throughput, HTTP requests/s and peak memory", runBench},
		{"hybrid", "build hybrid SQL+vector collections, execute ProRetrieval programs, generate and evaluate benchmarks", runHybrid},
		{"reward", "score rollouts (JSONL on stdin) with QA, RPL, Search-P1 or ProRetrieval rewards", runReward},
		{"rerank", "score documents (JSONL) against a query with a Qwen3-Reranker or cross-encoder", runRerank},
		{"programs", "run RPL retrieval programs (JSONL in, JSONL results out) against an index", runPrograms},
		{"gencorpus", "generate a wiki-shaped corpus of any size from a real seed corpus (topical or unigram model)", runGencorpus},
		{"corpusstats", "print term statistics of corpora side by side (lengths, tf>1, df, co-occurrence)", runCorpusstats},
		{"mutate", "propose verified RPL mutations of rollouts' last programs, build D_mut records, or --eval on a question set", runMutate},
	}
}

func usage(w io.Writer) { listCommands(w, "rlsearch", commands()) }

// listCommands prints the usage line and the commands of prog.
func listCommands(w io.Writer, prog string, cs []command) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prog)
	for _, c := range cs {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nrun '%s <command> -h' for the flags of a command\n", prog)
}

// runSub runs the subcommand of prog named by args[0]; without one, or
// with -h, it lists them.
func runSub(ctx context.Context, prog string, subs []command, args []string, stdout, stderr io.Writer) error {
	for _, c := range subs {
		if len(args) > 0 && c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	listCommands(stderr, "rlsearch "+prog, subs)
	switch {
	case len(args) == 0:
		return usageErr("missing subcommand")
	case args[0] == "-h" || args[0] == "--help":
		return flag.ErrHelp
	}
	return usageErr("unknown %s subcommand %q", prog, args[0])
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command and returns the process exit code: 0 success,
// 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "rlsearch %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "rlsearch %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "rlsearch: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}
