// Command rlsearch builds and serves retrieval indexes for search-agent RL:
// BM25 and E5 dense retrieval over a Search-R1 / FlashRAG corpus, behind
// Search-R1's /retrieve API, with retrieval programs, rerankers, rewards
// and hybrid collections beside it. `rlsearch` alone lists the commands
// (the table in commands); `rlsearch CMD -h` lists a command's flags.
//
// The benchmark harness, the corpus generator and the evaluations are
// cmd/rlsearch-bench's: this binary links no package of bench/ (see
// TestServingBinaryDeps), and their old spellings here (`rlsearch bench`,
// `rlsearch eval`, ...) exit 2 naming the new command (moved).
//
// main only turns flags into configurations (the shared groups are
// cmd/internal/cmdflags's) and calls the packages; the server is
// assembled by server/app.
package main

import (
	"context"
	"fmt"
	"io"
	"strings"

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
		{Name: "check", Summary: "check every checksum, block and count of an index, collection, shard or other stored file (formerly verify)", Flags: checkCmd, Args: "PATH",
			About: "Reads every file of PATH once, checking checksums, decoding and counts. PATH is an index,\na hybrid collection, a directory of them, or one stored file (see package integrity)."},
		{Name: "serve", Summary: "serve Search-R1's POST /retrieve, GET /healthz, GET /metrics", Flags: serveCmd},
		{Name: "search", Summary: "print ranked titles and scores for questions", Flags: searchCmd, Args: `"question" ...`},
		{Name: "hybrid", Summary: "build hybrid SQL+vector collections and execute ProRetrieval programs", Run: runHybrid},
		{Name: "reward", Summary: "score rollouts (JSONL on stdin) with QA, RPL, Search-P1 or ProRetrieval rewards", Flags: rewardCmd},
		{Name: "rerank", Summary: "score documents (JSONL) against a query with a Qwen3-Reranker or cross-encoder", Flags: rerankCmd, Required: []string{"reranker"}},
		{Name: "programs", Summary: "run RPL retrieval programs (JSONL in, JSONL results out) against an index", Flags: programsCmd},
		{Name: "inspect", Summary: "write the rollout inspector's view of a dump (verl, Search-R1, chat, rlsearch) as one self-contained HTML file", Flags: inspectCmd, Args: "ROLLOUTS.jsonl", Required: []string{"out"},
			About: "Reads every line of the dump (bad lines are counted and listed, not fatal), scores every rollout with the reward package\nand writes one HTML file that works offline. With --index the programs are replayed and every retrieval call shown.\nThe same view is served live by `rlsearch serve --inspect ROLLOUTS.jsonl` at /ui/."},
		{Name: "mutate", Summary: "propose verified RPL mutations of rollouts' last programs, or build D_mut records", Flags: mutateCmd},
	}
}

func main() { cli.Main(run) }

// usageErrs are the errors of the packages that mean bad flags or
// arguments: exit status 2, as a usage error of cmd.
var usageErrs = []error{app.ErrConfig, index.ErrNoRetriever, reward.ErrConfig}

// usageErr is package cli's usage error (exit status 2).
var usageErr = cli.Usagef

// run executes one command and returns the process exit code: 0 success
// (or help), 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := moved(args); err != nil {
		return cli.Report(stderr, "rlsearch", args, err)
	}
	args = renamed(args, stderr)
	return cli.Run(ctx, "rlsearch", commands(), args, stdout, stderr, usageErrs...)
}

// renamedCommands maps the old names of renamed commands to the new, kept
// for one release: "verify" became "check" (issue 37: "verify" is the RPL
// mutation verifier's word, V_ret; file integrity is checked).
var renamedCommands = map[string]string{"verify": "check"}

// renamed returns args with a renamed command's old name replaced by the
// new one, after one deprecation line on stderr.
func renamed(args []string, stderr io.Writer) []string {
	if len(args) == 0 {
		return args
	}
	to, ok := renamedCommands[args[0]]
	if !ok {
		return args
	}
	fmt.Fprintf(stderr, "rlsearch: %q is deprecated, use %q\n", args[0], to)
	return append([]string{to}, args[1:]...)
}

// moved is a usage error naming the rlsearch-bench command, with the same
// arguments, for the spellings of the commands that moved there (the
// benchmark harness, the corpus generator and the evaluations), else nil.
func moved(args []string) error {
	if len(args) == 0 {
		return nil
	}
	flagged := func(name string) int { // the index in args of --name or --name=..., else -1
		for i, a := range args[1:] {
			if a == "--" {
				break
			}
			if n := strings.TrimLeft(a, "-"); len(n) < len(a) && (n == name || strings.HasPrefix(n, name+"=")) && n != name+"=false" {
				return i + 1
			}
		}
		return -1
	}
	to, rest := "", args[1:]
	switch args[0] {
	case "bench":
		to = "run"
		if len(rest) > 0 && (rest[0] == "compare" || rest[0] == "render") {
			to, rest = rest[0], rest[1:]
		} else if flagged("index") >= 0 {
			to = "index"
		}
	case "eval", "gencorpus", "corpusstats":
		to = args[0]
	case "hybrid":
		if len(rest) > 0 && (rest[0] == "gen" || rest[0] == "eval") {
			to, rest = "hybrid-"+rest[0], rest[1:]
		}
	case "mutate":
		if i := flagged("eval"); i >= 0 {
			to, rest = "mutate-eval", append(append([]string{}, args[1:i]...), args[i+1:]...)
		}
	}
	if to == "" {
		return nil
	}
	return usageErr("moved to the benchmark binary: run `%s` (make build builds bin/rlsearch-bench)", strings.Join(append([]string{"rlsearch-bench", to}, rest...), " "))
}
