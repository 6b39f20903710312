// Command rlsearch builds and serves retrieval indexes for search-agent RL:
// BM25 and E5 dense retrieval over a Search-R1 / FlashRAG corpus, behind
// Search-R1's /retrieve API, with retrieval programs, rerankers, rewards
// and hybrid collections beside it. `rlsearch` alone lists the commands
// (the table in commands); `rlsearch CMD -h` lists a command's flags.
//
// main only turns flags into configurations and calls the packages; the
// server is assembled by internal/app.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/app"
	"github.com/rlsearch/rlsearch/reward"
)

// runFunc runs a command on its positional arguments.
type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// command is one (sub)command: either run parses its own arguments, or
// flags binds the command's flags and returns its body, which exec runs
// after parsing (with the positional arguments). The usage text comes from
// these fields and the flag definitions.
type command struct {
	name, summary string
	run           runFunc
	flags         func(fs *flag.FlagSet) runFunc
	args          string   // positional arguments in the usage line; "" = none accepted
	req           []string // flags that must be set (non-zero)
	about         string   // text printed between the usage line and the flags
}

func commands() []command {
	return []command{
		{name: "index", summary: "build an index directory from a corpus JSONL", flags: indexCmd, req: []string{"corpus", "out"}},
		{name: "verify", summary: "check every checksum, block and count of an index, collection, shard or other stored file", flags: verifyCmd, args: "PATH",
			about: "Reads every file of PATH once, checking checksums, decoding and counts. PATH is an index,\na hybrid collection, a directory of them, or one stored file (see package verify)."},
		{name: "serve", summary: "serve Search-R1's POST /retrieve, GET /healthz, GET /metrics", flags: serveCmd},
		{name: "search", summary: "print ranked titles and scores for questions", flags: searchCmd, args: `"question" ...`},
		{name: "eval", summary: "print recall@k of gold passages for a question set", flags: evalCmd},
		{name: "bench", summary: "measure query throughput, HTTP requests/s and peak memory", run: runBench},
		{name: "hybrid", summary: "build hybrid SQL+vector collections, execute ProRetrieval programs, generate and evaluate benchmarks", run: runHybrid},
		{name: "reward", summary: "score rollouts (JSONL on stdin) with QA, RPL, Search-P1 or ProRetrieval rewards", flags: rewardCmd},
		{name: "rerank", summary: "score documents (JSONL) against a query with a Qwen3-Reranker or cross-encoder", flags: rerankCmd, req: []string{"reranker"}},
		{name: "programs", summary: "run RPL retrieval programs (JSONL in, JSONL results out) against an index", flags: programsCmd},
		{name: "gencorpus", summary: "generate a wiki-shaped corpus of any size from a real seed corpus (topical or unigram model)", flags: gencorpusCmd, req: []string{"n", "out"}},
		{name: "corpusstats", summary: "print term statistics of corpora side by side (lengths, tf>1, df, co-occurrence)", flags: corpusstatsCmd, args: "FILE[@FROM:TO] ...",
			about: "Term statistics of corpora (BM25's analyzed terms) side by side; FILE@FROM:TO measures rows [FROM, TO)\n(0-based; either bound may be empty), e.g. gen.jsonl.zst@:18175 gen.jsonl.zst@18175:36350."},
		{name: "mutate", summary: "propose verified RPL mutations of rollouts' last programs, build D_mut records, or --eval on a question set", flags: mutateCmd},
	}
}

// exec runs c as `prog c.name args...`.
func (c command) exec(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) error {
	if c.run != nil {
		return c.run(ctx, args, stdout, stderr)
	}
	name := prog + " " + c.name
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	body := c.flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s", name)
		for _, r := range c.req {
			fmt.Fprintf(fs.Output(), " --%s %s", r, strings.ToUpper(r))
		}
		fmt.Fprintf(fs.Output(), " [flags]%s\n\n", strings.TrimRight(" "+c.args, " "))
		if c.about != "" {
			fmt.Fprintf(fs.Output(), "%s\n\n", c.about)
		}
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if c.args == "" && fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if err := required(fs, c.req...); err != nil {
		return err
	}
	return body(ctx, fs.Args(), stdout, stderr)
}

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
			return c.exec(ctx, prog, args[1:], stdout, stderr)
		}
	}
	listCommands(stderr, prog, subs)
	switch {
	case len(args) == 0:
		return usageErr("missing command")
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		return flag.ErrHelp
	}
	return usageErr("unknown command %q", args[0])
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageErrs are the errors of the packages that mean bad flags or
// arguments: exit status 2, as a usage error of cmd.
var usageErrs = []error{errUsage, app.ErrConfig, index.ErrNoRetriever, gencorpus.ErrBadConfig, mutateeval.ErrNoQuestions, reward.ErrConfig}

// run executes one command and returns the process exit code: 0 success
// (or help), 1 failure, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := runSub(ctx, "rlsearch", commands(), args, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", strings.Join(append([]string{"rlsearch"}, args[:min(len(args), 1)]...), " "), err)
	for _, u := range usageErrs {
		if errors.Is(err, u) {
			return 2
		}
	}
	return 1
}
