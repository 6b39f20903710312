package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/internal/progress"
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
	executions := fs.Int("executions", 0, "execution budget per program (0 = 64, at most 256)")
	minGold := fs.Int("min-gold", 0, "V_ret needs at least this many gold documents printed (0 = all)")
	maxVerified := fs.Int("max-verified", 0, "verified mutations to find per program (0 = 1)")
	maxPrint := fs.Int("max-print", 0, "documents a mutation prints: min(kept, this) (0 = 20, the paper's print budget)")
	poolEarlier := fs.Bool("pool-earlier-turns", false, "add the queries of earlier retrieval turns to the query pool")
	noCache := fs.Bool("no-cache", false, "no shared primitive cache: every execution retrieves on its own (the oracle)")
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
	cfg := sdk.MutateConfig{Executions: *executions, MinGold: *minGold, MaxVerified: *maxVerified,
		PoolFromEarlierTurns: *poolEarlier, NoCache: *noCache, Space: sdk.Space{MaxPrint: *maxPrint}}
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
	src, name, err := jsonl.Open(*in)
	if err != nil {
		return err
	}
	defer src.Close()
	type line struct {
		n   int
		raw []byte
	}
	var lines []line
	if err := jsonl.NewReader(src, name, sdk.DefaultMaxBodyBytes).Each(func(n int, raw []byte) error {
		lines = append(lines, line{n, slices.Clone(raw)})
		return nil
	}); errors.Is(err, jsonl.ErrLineTooLong) {
		return fmt.Errorf("%w: %v", rlsearch.ErrBadInput, err)
	} else if err != nil {
		return err
	}
	prog := progress.New(progressTo(stderr, !*quiet), "mutate", "lines", len(lines))
	var results []any
	start := time.Now()
	if *records {
		for _, b := range lines {
			var req sdk.RecordRequest
			if err := jsonl.DecodeStrict(b.raw, &req); err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.n, err)
			}
			rec, err := v.BuildRecord(ctx, req, nil)
			res := sdk.RecordResult{}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Error = err.Error()
			} else {
				res.Record = &rec
			}
			results = append(results, res)
			prog.Add(1)
		}
	} else {
		ts := make([]sdk.Trajectory, len(lines))
		for i, b := range lines {
			err := jsonl.DecodeStrict(b.raw, &ts[i])
			if err == nil {
				err = ts[i].Validate()
			}
			if err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.n, err)
			}
		}
		for _, p := range v.ProposeBatch(ctx, ts, *workers, func() { prog.Add(1) }) {
			results = append(results, p)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	prog.Finish()
	if err := jsonl.WriteFile(*out, stdout, func(w *jsonl.Writer) error {
		for _, r := range results {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mutate: %d lines in %.2fs\n", len(lines), time.Since(start).Seconds())
	return nil
}

// progressTo is w when on, else nil (no progress).
func progressTo(w io.Writer, on bool) io.Writer {
	if on {
		return w
	}
	return nil
}
