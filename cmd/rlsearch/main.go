// Command rlsearch builds and serves retrieval indexes for search-agent RL:
// BM25 and E5 dense retrieval over a Search-R1 / FlashRAG corpus, behind
// Search-R1's /retrieve API, with retrieval programs, rerankers, rewards
// and hybrid collections beside it. `rlsearch` alone lists the commands
// (the table in commands); `rlsearch CMD -h` lists a command's flags.
//
// main only turns flags into configurations and calls the packages; the
// server is assembled by server/app.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server/app"
)

// command is one (sub)command of the table in commands (package cli runs
// it); runFunc is a command's body.
type (
	command = cli.Command
	runFunc = cli.RunFunc
)

func commands() []command {
	return []command{
		{Name: "index", Summary: "build an index directory from a corpus JSONL", Flags: indexCmd, Required: []string{"corpus", "out"}},
		{Name: "verify", Summary: "check every checksum, block and count of an index, collection, shard or other stored file", Flags: verifyCmd, Args: "PATH",
			About: "Reads every file of PATH once, checking checksums, decoding and counts. PATH is an index,\na hybrid collection, a directory of them, or one stored file (see package verify)."},
		{Name: "serve", Summary: "serve Search-R1's POST /retrieve, GET /healthz, GET /metrics", Flags: serveCmd},
		{Name: "search", Summary: "print ranked titles and scores for questions", Flags: searchCmd, Args: `"question" ...`},
		{Name: "eval", Summary: "print recall@k of gold passages for a question set", Flags: evalCmd},
		{Name: "bench", Summary: "measure query throughput, HTTP requests/s and peak memory", Run: runBench},
		{Name: "hybrid", Summary: "build hybrid SQL+vector collections, execute ProRetrieval programs, generate and evaluate benchmarks", Run: runHybrid},
		{Name: "reward", Summary: "score rollouts (JSONL on stdin) with QA, RPL, Search-P1 or ProRetrieval rewards", Flags: rewardCmd},
		{Name: "rerank", Summary: "score documents (JSONL) against a query with a Qwen3-Reranker or cross-encoder", Flags: rerankCmd, Required: []string{"reranker"}},
		{Name: "programs", Summary: "run RPL retrieval programs (JSONL in, JSONL results out) against an index", Flags: programsCmd},
		{Name: "gencorpus", Summary: "generate a wiki-shaped corpus of any size from a real seed corpus (topical or unigram model)", Flags: gencorpusCmd, Required: []string{"n", "out"}},
		{Name: "corpusstats", Summary: "print term statistics of corpora side by side (lengths, tf>1, df, co-occurrence)", Flags: corpusstatsCmd, Args: "FILE[@FROM:TO] ...",
			About: "Term statistics of corpora (BM25's analyzed terms) side by side; FILE@FROM:TO measures rows [FROM, TO)\n(0-based; either bound may be empty), e.g. gen.jsonl.zst@:18175 gen.jsonl.zst@18175:36350."},
		{Name: "inspect", Summary: "write the rollout inspector's view of a dump (verl, Search-R1, chat, rlsearch) as one self-contained HTML file", Flags: inspectCmd, Args: "ROLLOUTS.jsonl", Required: []string{"out"},
			About: "Reads every line of the dump (bad lines are counted and listed, not fatal), scores every rollout with the reward package\nand writes one HTML file that works offline. With --index the programs are replayed and every retrieval call shown.\nThe same view is served live by `rlsearch serve --inspect ROLLOUTS.jsonl` at /ui/."},
		{Name: "mutate", Summary: "propose verified RPL mutations of rollouts' last programs, build D_mut records, or --eval on a question set", Flags: mutateCmd},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageErrs are the errors of the packages that mean bad flags or
// arguments: exit status 2, as a usage error of cmd.
var usageErrs = []error{app.ErrConfig, index.ErrNoRetriever, gencorpus.ErrBadConfig, mutateeval.ErrNoQuestions, reward.ErrConfig}

// run executes one command and returns the process exit code: 0 success
// (or help), 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := cli.RunSub(ctx, "rlsearch", commands(), args, stdout, stderr)
	if code := cli.ExitCode(err, usageErrs...); code != 0 {
		fmt.Fprintf(stderr, "%s: %v\n", strings.Join(append([]string{"rlsearch"}, args[:min(len(args), 1)]...), " "), err)
		return code
	}
	return 0
}
