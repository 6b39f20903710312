package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/internal/progress"
)

// This file holds the JSONL drivers of `rlsearch programs` and `rlsearch
// mutate`: whole files in, one result line per input line out, in input
// order. Input lines are at most DefaultMaxBodyBytes (64 MiB) long, the
// largest body the HTTP endpoints accept.

// DefaultFileBatch is FileConfig.Batch when 0: programs run concurrently
// as one RunBatch call (their retrieval calls coalesced and memoised).
const DefaultFileBatch = 512

// FileConfig configures Runtime.RunJSONL. The zero value is valid.
type FileConfig struct {
	// Batch is how many programs run as one RunBatch call (0 =
	// DefaultFileBatch).
	Batch int
	// Options apply to every batch.
	Options BatchOptions
}

// Validate reports a negative Batch.
func (c FileConfig) Validate() error {
	if c.Batch < 0 {
		return fmt.Errorf("sdk: FileConfig.Batch %d is negative", c.Batch)
	}
	return nil
}

// FileStats summarises a RunJSONL call.
type FileStats struct {
	Programs int           // programs run
	Failed   int           // results whose Code is not CodeOK
	Elapsed  time.Duration // from the first batch to the last result written
}

// ReadRequests parses programs JSONL, one Request per line ({"id", "code"
// | "response", "question", "budgets"}; blank lines skipped). name (a file
// name, "stdin") prefixes errors. A malformed line, a line with neither
// code nor response, invalid budgets or a line over DefaultMaxBodyBytes
// is an error wrapping rlsearch.ErrBadInput that names the line.
func ReadRequests(r io.Reader, name string) ([]Request, error) {
	var reqs []Request
	err := jsonl.NewReader(r, name, DefaultMaxBodyBytes).Each(func(line int, b []byte) error {
		var req Request
		if err := jsonl.DecodeStrict(b, &req); err != nil {
			return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
		}
		if _, err := req.check(); err != nil {
			return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, line, err)
		}
		reqs = append(reqs, req)
		return nil
	})
	if errors.Is(err, jsonl.ErrLineTooLong) {
		return nil, fmt.Errorf("%w: %v", rlsearch.ErrBadInput, err)
	}
	return reqs, err
}

// RunJSONL reads every request from in (see ReadRequests; nothing runs
// when a line is bad), runs them cfg.Batch at a time with RunBatch and
// writes one Result per line to out, in input order. A program that fails
// is a result with an error code, not an error; the error is ctx's when it
// ends between batches, or out's.
func (rt *Runtime) RunJSONL(ctx context.Context, in io.Reader, name string, out io.Writer, cfg FileConfig) (FileStats, error) {
	var st FileStats
	if err := cfg.Validate(); err != nil {
		return st, err
	}
	batch := cfg.Batch
	if batch == 0 {
		batch = DefaultFileBatch
	}
	reqs, err := ReadRequests(in, name)
	if err != nil {
		return st, err
	}
	start := time.Now()
	w := jsonl.NewWriter(out)
	for lo := 0; lo < len(reqs); lo += batch {
		for _, res := range rt.RunBatch(ctx, reqs[lo:min(lo+batch, len(reqs))], cfg.Options) {
			if res.Code != CodeOK {
				st.Failed++
			}
			if err := w.Write(res); err != nil {
				return st, err
			}
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	st.Programs, st.Elapsed = len(reqs), time.Since(start)
	return st, w.Flush()
}

// MutateFileConfig configures Verifier.MutateJSONL. The zero value
// proposes mutations, 4 workers, no progress.
type MutateFileConfig struct {
	// Records reads RecordRequest lines and writes RecordResult lines
	// (D_mut records); otherwise Trajectory lines in, ProposeResult out.
	Records bool
	// Workers: trajectories searched at once (0 = 4; records are built one
	// after the other).
	Workers int
	// Progress, when non-nil, receives a progress line per input line
	// (package internal/progress).
	Progress io.Writer
}

// MutateJSONL reads every line of in (a bad line, or one over
// DefaultMaxBodyBytes, is an error wrapping rlsearch.ErrBadInput that
// names it, before any search), proposes mutations (or builds records with
// cfg.Records) and writes one result per line to out, in input order. A
// rollout that cannot be mutated is a result with its Status and Error
// set, not an error. It returns the counts of the results (the lines:
// Rollouts or Records + RecordErrors).
func (v *Verifier) MutateJSONL(ctx context.Context, in io.Reader, name string, out io.Writer, cfg MutateFileConfig) (MutateSummary, error) {
	if cfg.Workers < 0 {
		return MutateSummary{}, fmt.Errorf("sdk: MutateFileConfig.Workers %d is negative", cfg.Workers)
	}
	type line struct {
		n   int
		raw []byte
	}
	var lines []line
	if err := jsonl.NewReader(in, name, DefaultMaxBodyBytes).Each(func(n int, raw []byte) error {
		lines = append(lines, line{n, slices.Clone(raw)})
		return nil
	}); errors.Is(err, jsonl.ErrLineTooLong) {
		return MutateSummary{}, fmt.Errorf("%w: %v", rlsearch.ErrBadInput, err)
	} else if err != nil {
		return MutateSummary{}, err
	}
	prog := progress.New(cfg.Progress, "mutate", "lines", len(lines))
	var results []any
	var recs []RecordResult
	var props []ProposeResult
	if cfg.Records {
		reqs := make([]RecordRequest, len(lines))
		for i, b := range lines {
			if err := jsonl.DecodeStrict(b.raw, &reqs[i]); err != nil {
				return MutateSummary{}, fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.n, err)
			}
		}
		for _, req := range reqs {
			rec, err := v.BuildRecord(ctx, req, nil)
			res := RecordResult{}
			if err != nil {
				if ctx.Err() != nil {
					return MutateSummary{}, ctx.Err()
				}
				res.Error = err.Error()
			} else {
				res.Record = &rec
			}
			results = append(results, res)
			recs = append(recs, res)
			prog.Add(1)
		}
	} else {
		ts := make([]Trajectory, len(lines))
		for i, b := range lines {
			err := jsonl.DecodeStrict(b.raw, &ts[i])
			if err == nil {
				err = ts[i].Validate()
			}
			if err != nil {
				return MutateSummary{}, fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.n, err)
			}
		}
		props = v.ProposeBatch(ctx, ts, cfg.Workers, func() { prog.Add(1) })
		for _, p := range props {
			results = append(results, p)
		}
		if err := ctx.Err(); err != nil {
			return MutateSummary{}, err
		}
	}
	prog.Finish()
	w := jsonl.NewWriter(out)
	for _, r := range results {
		if err := w.Write(r); err != nil {
			return MutateSummary{}, err
		}
	}
	return summarize(props, recs), w.Flush()
}
