package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server/app"
)

// programFlags open an index and the models behind the program runtime
// (programs and mutate).
type programFlags struct {
	idx indexFlags
	rt  app.RuntimeConfig // Index comes from idx
}

func (p *programFlags) bind(fs *flag.FlagSet) {
	p.idx.bind(fs)
	bindRerank(fs, &p.rt.Reranker)
}

// open returns the program runtime (app.OpenRuntime); the closer releases
// everything.
func (p *programFlags) open(ctx context.Context) (*sdk.Runtime, func(), error) {
	cfg := p.rt
	cfg.Index = p.idx.config()
	return app.OpenRuntime(ctx, cfg)
}

// programsCmd executes retrieval programs from JSONL (one sdk.Request per
// line) and writes one sdk.Result per line, in input order
// (sdk.Runtime.RunJSONL).
func programsCmd(fs *flag.FlagSet) runFunc {
	var (
		pf  programFlags
		cfg sdk.FileConfig
		b   = &pf.rt.Budgets
	)
	pf.bind(fs)
	in := fs.String("in", "", "programs JSONL (default stdin)")
	out := fs.String("out", "", "results JSONL, written atomically (default stdout)")
	fs.IntVar(&cfg.Batch, "batch", sdk.DefaultFileBatch, "programs run concurrently as one batch (their retrieval calls coalesced and memoised)")
	fs.BoolVar(&cfg.Options.NoCoalesce, "no-coalesce", false, "answer every retrieval call on its own")
	fs.BoolVar(&cfg.Options.NoMemo, "no-memo", false, "do not memoise (route, query, width) within a batch")
	fs.StringVar(&pf.rt.PolicyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the observation token cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.DurationVar(&b.Timeout, "timeout", 0, "wall-clock budget per program (0 = 10s)")
	fs.Uint64Var(&b.MaxSteps, "max-steps", 0, "Starlark step budget per program (0 = 1,000,000)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if cfg.Batch < 1 {
			return usageErr("--batch %d must be ≥ 1", cfg.Batch)
		}
		rt, closeRT, err := pf.open(ctx)
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
// --records: record requests in, D_mut records out; --eval: the
// single-query width-3 BM25 experiment over a question set
// (mutateeval.Run), a JSON summary out.
func mutateCmd(fs *flag.FlagSet) runFunc {
	var (
		pf  programFlags
		cfg sdk.MutateConfig
		ev  mutateeval.Config
	)
	pf.bind(fs)
	in := fs.String("in", "", "input JSONL (default stdin): trajectories, or record requests with --records")
	out := fs.String("out", "", "output JSONL, written atomically (default stdout)")
	records := fs.Bool("records", false, "build D_mut records: each line {trajectory, program, continuation}")
	eval := fs.Bool("eval", false, "measure: for every question, a single-query width-3 BM25 program of the question text, searched for a verified mutation")
	fs.StringVar(&ev.Questions, "questions", defaultQuestions(), "question set for --eval")
	datasets := fs.String("datasets", "hotpotqa,musique", "datasets of the question set used by --eval (comma-separated; empty = all)")
	fs.IntVar(&cfg.Executions, "executions", 0, "execution budget per program (0 = 64, at most 256)")
	fs.IntVar(&cfg.MinGold, "min-gold", 0, "V_ret needs at least this many gold documents printed (0 = all)")
	fs.IntVar(&cfg.MaxVerified, "max-verified", 0, "verified mutations to find per program (0 = 1)")
	fs.IntVar(&cfg.Space.MaxPrint, "max-print", 0, "documents a mutation prints: min(kept, this) (0 = 20, the paper's print budget)")
	fs.BoolVar(&cfg.PoolFromEarlierTurns, "pool-earlier-turns", false, "add the queries of earlier retrieval turns to the query pool")
	fs.BoolVar(&cfg.NoCache, "no-cache", false, "no shared primitive cache: every execution retrieves on its own (the oracle)")
	fs.IntVar(&ev.Workers, "workers", 4, "programs searched at once")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		switch {
		case *records && *eval:
			return usageErr("--records and --eval are exclusive")
		case ev.Workers < 1:
			return usageErr("--workers %d must be ≥ 1", ev.Workers)
		}
		if err := cfg.Validate(); err != nil {
			return usageErr("%v", err)
		}
		rt, closeRT, err := pf.open(ctx)
		if err != nil {
			return err
		}
		defer closeRT()
		v, err := sdk.NewVerifier(rt, cfg)
		if err != nil {
			return err
		}
		ev.Progress = progressTo(stderr, !*quiet)
		if *eval {
			if *datasets != "" {
				ev.Datasets = strings.Split(*datasets, ",")
			}
			sum, err := mutateeval.Run(ctx, v, ev)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(sum)
		}
		start := time.Now()
		var sum sdk.MutateSummary
		if err := jsonl.Pipe(*in, *out, stdout, func(r io.Reader, name string, w io.Writer) (err error) {
			sum, err = v.MutateJSONL(ctx, r, name, w, sdk.MutateFileConfig{Records: *records, Workers: ev.Workers, Progress: ev.Progress})
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
