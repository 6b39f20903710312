package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rlsearch/rlsearch"
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

// runPrograms executes retrieval programs from JSONL (one sdk.Request per
// line: {"id", "code" | "response", "question", "budgets"}) and writes one
// sdk.Result per line, in input order.
func runPrograms(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("programs", flag.ContinueOnError)
	var idx indexFlags
	idx.bind(fs)
	var rr rerankFlags
	rr.bind(fs)
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
	ix, closeIx, err := idx.open(ctx)
	if err != nil {
		return err
	}
	defer closeIx()
	deps, _, closeDeps, err := openDeps(ctx, &rr, idx.model.ortLib, *tokenizer)
	if err != nil {
		return err
	}
	defer closeDeps()
	cfg := runtimeConfig(ix, deps)
	cfg.Budgets = sdk.Budgets{Timeout: *timeout, MaxSteps: *maxSteps}
	rt, err := sdk.New(cfg)
	if err != nil {
		return err
	}

	src := io.Reader(os.Stdin)
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	}
	reqs, err := readRequests(src)
	if err != nil {
		return err
	}
	dst := stdout
	var tmp *os.File
	if *out != "" {
		if tmp, err = os.CreateTemp(filepath.Dir(*out), filepath.Base(*out)+".tmp-*"); err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		dst = tmp
	}
	w := bufio.NewWriter(dst)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	opt := sdk.BatchOptions{NoCoalesce: *noCoalesce, NoMemo: *noMemo}
	start := time.Now()
	failed := 0
	for lo := 0; lo < len(reqs); lo += *batch {
		for _, res := range rt.RunBatch(ctx, reqs[lo:min(lo+*batch, len(reqs))], opt) {
			if res.Code != sdk.CodeOK {
				failed++
			}
			if err := enc.Encode(res); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if tmp != nil {
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), *out); err != nil {
			return err
		}
	}
	el := time.Since(start)
	fmt.Fprintf(stderr, "ran %d programs in %.2fs (%.0f programs/s), %d ended with an error code\n", len(reqs), el.Seconds(), float64(len(reqs))/max(el.Seconds(), 1e-9), failed)
	return nil
}

// readRequests parses JSONL requests; a bad line is an error naming it.
func readRequests(r io.Reader) ([]sdk.Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), sdk.DefaultMaxBodyBytes)
	var reqs []sdk.Request
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var req sdk.Request
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
		}
		if req.Code == "" && req.Response == "" {
			return nil, fmt.Errorf("%w: line %d: neither code nor response", rlsearch.ErrBadInput, line)
		}
		if req.Budgets != nil {
			if err := req.Budgets.Validate(); err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
			}
		}
		reqs = append(reqs, req)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line is over %d bytes", rlsearch.ErrBadInput, sdk.DefaultMaxBodyBytes)
		}
		return nil, err
	}
	return reqs, nil
}
