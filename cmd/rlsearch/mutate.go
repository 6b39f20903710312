package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/sdk"
)

// addMutateEndpoints mounts POST /v1/programs/mutate (package sdk) over the
// served index, with the default verifier configuration (64 executions,
// all gold); the rerank ladder is in the mutation space only when serve has
// a --reranker.
func addMutateEndpoints(m map[string]server.Endpoint, rt *sdk.Runtime) error {
	v, err := sdk.NewVerifier(rt, sdk.MutateConfig{})
	if err != nil {
		return err
	}
	m["/v1/programs/mutate"] = server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: sdk.DefaultMaxBodyBytes})
	return nil
}

// runMutate: trajectories JSONL in, proposals JSONL out (default);
// --records: record requests in, D_mut records out; --eval: the
// single-query width-3 BM25 experiment over a question set, a JSON summary
// out.
func runMutate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	var pf programFlags
	pf.bind(fs)
	in := fs.String("in", "", "input JSONL (default stdin): trajectories, or record requests with --records")
	out := fs.String("out", "", "output JSONL, written atomically (default stdout)")
	records := fs.Bool("records", false, "build D_mut records: each line {trajectory, program, continuation}")
	eval := fs.Bool("eval", false, "measure: for every question, a single-query width-3 BM25 program of the question text, searched for a verified mutation")
	questions := fs.String("questions", defaultQuestions(), "question set for --eval")
	datasets := fs.String("datasets", "hotpotqa,musique", "datasets of the question set used by --eval (comma-separated; empty = all)")
	var cfg sdk.MutateConfig
	fs.IntVar(&cfg.Executions, "executions", 0, "execution budget per program (0 = 64, at most 256)")
	fs.IntVar(&cfg.MinGold, "min-gold", 0, "V_ret needs at least this many gold documents printed (0 = all)")
	fs.IntVar(&cfg.MaxVerified, "max-verified", 0, "verified mutations to find per program (0 = 1)")
	fs.IntVar(&cfg.Space.MaxPrint, "max-print", 0, "documents a mutation prints: min(kept, this) (0 = 20, the paper's print budget)")
	fs.BoolVar(&cfg.PoolFromEarlierTurns, "pool-earlier-turns", false, "add the queries of earlier retrieval turns to the query pool")
	fs.BoolVar(&cfg.NoCache, "no-cache", false, "no shared primitive cache: every execution retrieves on its own (the oracle)")
	workers := fs.Int("workers", 4, "programs searched at once")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if *records && *eval {
		return usageErr("--records and --eval are exclusive")
	}
	if *workers < 1 {
		return usageErr("--workers %d must be ≥ 1", *workers)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	rt, closeRT, err := pf.runtime(ctx, "", sdk.Budgets{})
	if err != nil {
		return err
	}
	defer closeRT()
	v, err := sdk.NewVerifier(rt, cfg)
	if err != nil {
		return err
	}
	if *eval {
		var ds []string
		if *datasets != "" {
			ds = strings.Split(*datasets, ",")
		}
		sum, err := mutateeval.Run(ctx, v, mutateeval.Config{Questions: *questions, Datasets: ds, Workers: *workers, Progress: progressTo(stderr, !*quiet)})
		if errors.Is(err, mutateeval.ErrNoQuestions) {
			return usageErr("%v", err)
		} else if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	start, n := time.Now(), 0
	if err := withFiles(*in, *out, stdout, func(r io.Reader, name string, w io.Writer) (err error) {
		n, err = v.MutateJSONL(ctx, r, name, w, sdk.MutateFileConfig{Records: *records, Workers: *workers, Progress: progressTo(stderr, !*quiet)})
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mutate: %d lines in %.2fs\n", n, time.Since(start).Seconds())
	return nil
}

// progressTo is w when on, else nil (no progress).
func progressTo(w io.Writer, on bool) io.Writer {
	if on {
		return w
	}
	return nil
}
