package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonl"
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
	deps, _, closeDeps, err := openDeps(ctx, &p.rr, p.idx.model.ortLib, tokenizer)
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
// line: {"id", "code" | "response", "question", "budgets"}) and writes one
// sdk.Result per line, in input order.
func runPrograms(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("programs", flag.ContinueOnError)
	var pf programFlags
	pf.bind(fs)
	in := fs.String("in", "", "programs JSONL (default stdin)")
	out := fs.String("out", "", "results JSONL, written atomically (default stdout)")
	batch := fs.Int("batch", 512, "programs run concurrently as one batch (their retrieval calls coalesced and memoised)")
	noCoalesce := fs.Bool("no-coalesce", false, "answer every retrieval call on its own")
	noMemo := fs.Bool("no-memo", false, "do not memoise (route, query, width) within a batch")
	tokenizer := fs.String("policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the observation token cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	timeout := fs.Duration("timeout", 0, "wall-clock budget per program (0 = 10s)")
	maxSteps := fs.Uint64("max-steps", 0, "Starlark step budget per program (0 = 1,000,000)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *batch < 1 {
		return usageErr("--batch %d must be ≥ 1", *batch)
	}
	if len(fs.Args()) > 0 {
		return usageErr("unexpected arguments %q (programs come from --in or stdin)", fs.Args())
	}
	rt, closeRT, err := pf.runtime(ctx, *tokenizer, sdk.Budgets{Timeout: *timeout, MaxSteps: *maxSteps})
	if err != nil {
		return err
	}
	defer closeRT()

	src, name, err := jsonl.Open(*in)
	if err != nil {
		return err
	}
	defer src.Close()
	reqs, err := readRequests(jsonl.NewReader(src, name, sdk.DefaultMaxBodyBytes))
	if err != nil {
		return err
	}
	opt := sdk.BatchOptions{NoCoalesce: *noCoalesce, NoMemo: *noMemo}
	start := time.Now()
	failed := 0
	if err := jsonl.WriteFile(*out, stdout, func(w *jsonl.Writer) error {
		for lo := 0; lo < len(reqs); lo += *batch {
			for _, res := range rt.RunBatch(ctx, reqs[lo:min(lo+*batch, len(reqs))], opt) {
				if res.Code != sdk.CodeOK {
					failed++
				}
				if err := w.Write(res); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stderr, "ran %d programs in %.2fs (%.0f programs/s), %d ended with an error code\n", len(reqs), el.Seconds(), float64(len(reqs))/max(el.Seconds(), 1e-9), failed)
	return nil
}

// readRequests parses JSONL requests; a bad line is an error naming it.
func readRequests(r *jsonl.Reader) ([]sdk.Request, error) {
	var reqs []sdk.Request
	err := r.Each(func(line int, b []byte) error {
		var req sdk.Request
		if err := jsonl.DecodeStrict(b, &req); err != nil {
			return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
		}
		if req.Code == "" && req.Response == "" {
			return fmt.Errorf("%w: line %d: neither code nor response", rlsearch.ErrBadInput, line)
		}
		if req.Budgets != nil {
			if err := req.Budgets.Validate(); err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
			}
		}
		reqs = append(reqs, req)
		return nil
	})
	if errors.Is(err, jsonl.ErrLineTooLong) {
		return nil, fmt.Errorf("%w: %v", rlsearch.ErrBadInput, err)
	}
	return reqs, err
}
