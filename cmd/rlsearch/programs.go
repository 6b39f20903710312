package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/internal/server"

	"github.com/rlsearch/rlsearch/sdk"
)

// addProgramEndpoints mounts POST /v1/programs/execute (package sdk) over
// the served index, with serve's --reranker behind rerank() (without one,
// rerank() answers "unavailable") and --policy-tokenizer counting
// observation tokens (sdk.BoundTokens without one).
func addProgramEndpoints(m map[string]server.Endpoint, rt *sdk.Runtime) error {
	m["/v1/programs/execute"] = server.JSON(rt.Serve, server.EndpointOptions{MaxBodyBytes: rt.MaxBodyBytes()})
	return nil
}

// programFlags open an index and the models behind the program runtime
// (programs and mutate).
type programFlags struct {
	idx indexFlags
	rr  rerankFlags
}

func (p *programFlags) bind(fs *flag.FlagSet) {
	p.idx.bind(fs)
	p.rr.bind(fs)
}

// runtime opens the index, the reranker (--reranker) and the policy
// tokenizer at tokenizer ("" = whitespace tokens) and returns a program
// runtime over them with budgets; the closer releases everything.
func (p *programFlags) runtime(ctx context.Context, tokenizer string, budgets sdk.Budgets) (*sdk.Runtime, func(), error) {
	ix, closeIx, err := p.idx.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	deps, _, closeDeps, err := openDeps(ctx, &p.rr, p.idx.model.cfg.ORTLib, tokenizer)
	if err != nil {
		closeIx()
		return nil, nil, err
	}
	closer := func() { closeDeps(); closeIx() }
	cfg := runtimeConfig(ix, deps)
	cfg.Budgets = budgets
	rt, err := sdk.New(cfg)
	if err != nil {
		closer()
		return nil, nil, err
	}
	return rt, closer, nil
}

// runPrograms executes retrieval programs from JSONL (one sdk.Request per
// line) and writes one sdk.Result per line, in input order
// (sdk.Runtime.RunJSONL).
func runPrograms(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("programs", flag.ContinueOnError)
	var pf programFlags
	var cfg sdk.FileConfig
	var b sdk.Budgets
	pf.bind(fs)
	in := fs.String("in", "", "programs JSONL (default stdin)")
	out := fs.String("out", "", "results JSONL, written atomically (default stdout)")
	fs.IntVar(&cfg.Batch, "batch", sdk.DefaultFileBatch, "programs run concurrently as one batch (their retrieval calls coalesced and memoised)")
	fs.BoolVar(&cfg.Options.NoCoalesce, "no-coalesce", false, "answer every retrieval call on its own")
	fs.BoolVar(&cfg.Options.NoMemo, "no-memo", false, "do not memoise (route, query, width) within a batch")
	tokenizer := fs.String("policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the observation token cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.DurationVar(&b.Timeout, "timeout", 0, "wall-clock budget per program (0 = 10s)")
	fs.Uint64Var(&b.MaxSteps, "max-steps", 0, "Starlark step budget per program (0 = 1,000,000)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if cfg.Batch < 1 {
		return usageErr("--batch %d must be ≥ 1", cfg.Batch)
	}
	if len(fs.Args()) > 0 {
		return usageErr("unexpected arguments %q (programs come from --in or stdin)", fs.Args())
	}
	rt, closeRT, err := pf.runtime(ctx, *tokenizer, b)
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
