package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/inspect"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server/app"
)

// inspectCmd writes the rollout inspector's view of a dump as one
// self-contained HTML file (inspect.WriteReport); with --index every
// program is replayed and its calls embedded.
func inspectCmd(fs *flag.FlagSet) runFunc {
	var (
		pf cmdflags.Programs
		rf cmdflags.Reward
	)
	pf.Bind(fs)
	rf.Bind(fs)
	fs.StringVar(&pf.RT.PolicyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy for the replayed programs' observation cap (with --index; empty = sdk.BoundTokens)")
	out := fs.String("out", "", "the HTML report to write (atomically)")
	gold := fs.String("gold", "", "questions JSONL (e.g. wiki_multihop/questions.jsonl) joined to rollouts without gold, by id, question, or question text in the prompt")
	kinds := fs.String("rewards", "qa,rpl,search-p1,proretrieval", "rewards to compute, comma-separated (each only where it applies)")
	llm := fs.Bool("llm-judge", false, "score Search-P1 with the --judge-url judge (one LLM request per judgement); default the lexical judge")
	workers := fs.Int("inspect-workers", 0, "rollouts analysed at once (0 = GOMAXPROCS)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 1 {
			return usageErr("want one rollout dump (JSONL), got %d arguments", len(args))
		}
		var ks []reward.Kind
		for _, k := range strings.Split(*kinds, ",") {
			kind, err := reward.ParseKind(strings.TrimSpace(k))
			if err != nil {
				return usageErr("--rewards: %v", err)
			}
			ks = append(ks, kind)
		}
		ac := inspect.AnalyzerConfig{Reward: rf.Options(), LLMJudge: *llm, Kinds: ks}
		if rf.Collections != "" {
			_, exec, done, err := app.OpenCollections(ctx, rf.Collections, nil)
			if err != nil {
				return err
			}
			defer done()
			ac.Reward.ProRetrieval.Executor = exec
		}
		if *gold != "" {
			f, err := os.Open(*gold)
			if err != nil {
				return usageErr("--gold: %v", err)
			}
			ac.Gold, err = inspect.ReadGold(f, *gold)
			f.Close()
			if err != nil {
				return usageErr("--gold: %v", err)
			}
		}
		an, err := inspect.NewAnalyzer(ac)
		if err != nil {
			return err
		}
		cfg := inspect.ReportConfig{Load: inspect.LoadConfig{Progress: stderr, Workers: *workers}}
		if pf.Idx.Cfg.Dir != "" {
			rt, closeRT, err := pf.Open(ctx)
			if err != nil {
				return err
			}
			defer closeRT()
			if cfg.Tracer, err = inspect.NewTracer(rt.Config()); err != nil {
				return err
			}
		}
		start := time.Now()
		sum, err := inspect.WriteReport(ctx, *out, args[0], an, cfg)
		if err != nil {
			return err
		}
		size := int64(0)
		if fi, err := os.Stat(*out); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(stdout, "inspect: %d rollouts, %d bad lines, from %s -> %s (%d bytes) in %.1fs\n", sum.Rollouts, sum.Bad, args[0], *out, size, time.Since(start).Seconds())
		for _, b := range sum.BadLines[:min(len(sum.BadLines), 5)] {
			fmt.Fprintf(stderr, "inspect: %s line %d: %s\n", args[0], b.Line, b.Error)
		}
		return nil
	}
}
