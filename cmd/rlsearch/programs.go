package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/internal/app"
	"github.com/rlsearch/rlsearch/sdk"
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
	cfg.Reranker.Model.ORTLib = cfg.Index.Model.ORTLib
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
		if err := withFiles(*in, *out, stdout, func(r io.Reader, name string, w io.Writer) (err error) {
			st, err = rt.RunJSONL(ctx, r, name, w, cfg)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "ran %d programs in %.2fs (%.0f programs/s), %d ended with an error code\n", st.Programs, st.Elapsed.Seconds(), float64(st.Programs)/max(st.Elapsed.Seconds(), 1e-9), st.Failed)
		return nil
	}
}
