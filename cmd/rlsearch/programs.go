package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/sdk"
)

// programsCmd executes retrieval programs from JSONL (one sdk.Request per
// line) and writes one sdk.Result per line, in input order
// (sdk.Runtime.RunJSONL).
func programsCmd(fs *flag.FlagSet) runFunc {
	var (
		pf  cmdflags.Programs
		cfg sdk.FileConfig
		b   = &pf.RT.Budgets
	)
	pf.Bind(fs)
	in := fs.String("in", "", "programs JSONL (default stdin)")
	out := fs.String("out", "", "results JSONL, written atomically (default stdout)")
	fs.IntVar(&cfg.Batch, "batch", sdk.DefaultFileBatch, "programs run concurrently as one batch (their retrieval calls coalesced and memoised)")
	fs.BoolVar(&cfg.Options.NoCoalesce, "no-coalesce", false, "answer every retrieval call on its own")
	fs.BoolVar(&cfg.Options.NoMemo, "no-memo", false, "do not memoise (route, query, width) within a batch")
	fs.StringVar(&pf.RT.PolicyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the observation token cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.DurationVar(&b.Timeout, "timeout", 0, "wall-clock budget per program (0 = 10s)")
	fs.Uint64Var(&b.MaxSteps, "max-steps", 0, "Starlark step budget per program (0 = 1,000,000)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if cfg.Batch < 1 {
			return usageErr("--batch %d must be ≥ 1", cfg.Batch)
		}
		rt, closeRT, err := pf.Open(ctx)
		if err != nil {
			return err
		}
		defer closeRT()
		var st sdk.FileStats
		if err := jsonl.Pipe(*in, *out, stdout, func(r io.Reader, name string, w io.Writer) (err error) {
			st, err = rt.RunJSONL(ctx, r, name, w, cfg)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "ran %d programs in %.2fs (%.0f programs/s), %d ended with an error code\n", st.Programs, st.Elapsed.Seconds(), float64(st.Programs)/max(st.Elapsed.Seconds(), 1e-9), st.Failed)
		return nil
	}
}

// mutateCmd: trajectories JSONL in, proposals JSONL out (default);
// --records: record requests in, D_mut records out. The question-set
// experiment (the old --eval) is rlsearch-bench mutate-eval.
func mutateCmd(fs *flag.FlagSet) runFunc {
	var m cmdflags.Mutate
	m.Bind(fs)
	in := fs.String("in", "", "input JSONL (default stdin): trajectories, or record requests with --records")
	out := fs.String("out", "", "output JSONL, written atomically (default stdout)")
	records := fs.Bool("records", false, "build D_mut records: each line {trajectory, program, continuation}")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		v, done, err := m.Open(ctx)
		if err != nil {
			return err
		}
		defer done()
		start := time.Now()
		var sum sdk.MutateSummary
		if err := jsonl.Pipe(*in, *out, stdout, func(r io.Reader, name string, w io.Writer) (err error) {
			sum, err = v.MutateJSONL(ctx, r, name, w, sdk.MutateFileConfig{Records: *records, Workers: m.Workers, Progress: m.Progress(stderr)})
			return err
		}); err != nil {
			return err
		}
		if *records {
			fmt.Fprintf(stderr, "mutate: %d lines in %.2fs: %d records, %d failed\n", sum.Records+sum.RecordErrors, time.Since(start).Seconds(), sum.Records, sum.RecordErrors)
			return nil
		}
		fmt.Fprintf(stderr, "mutate: %d lines in %.2fs: %d verified, %d no_verified_mutation, %d not_mutable, %d skipped_no_gold, %d error\n",
			sum.Rollouts, time.Since(start).Seconds(), sum.Verified, sum.NoVerifiedMutation, sum.NotMutable, sum.SkippedNoGold, sum.Errors)
		return nil
	}
}
