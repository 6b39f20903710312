package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/recovered"
)

// ProposeResult is Propose's answer for one rollout of a batch: the
// proposal, with Error saying why when that rollout could not be searched.
// Status is always one of Statuses: StatusSkippedNoGold for a rollout
// without gold ids, StatusError for any other failure (an index failure,
// the context ending), else the search's.
type ProposeResult struct {
	Proposal
	Error string `json:"error,omitempty"`
}

// MutateSummary counts the items of a response by outcome: proposals by
// Status (JSON keys as the Status strings), records built and failed.
type MutateSummary struct {
	Rollouts           int `json:"rollouts"` // proposals (trajectories in)
	Verified           int `json:"verified"`
	NoVerifiedMutation int `json:"no_verified_mutation"`
	NotMutable         int `json:"not_mutable"`
	SkippedNoGold      int `json:"skipped_no_gold"`
	Errors             int `json:"error"`
	Records            int `json:"records"`       // records built (records in)
	RecordErrors       int `json:"record_errors"` // record requests that failed (RecordResult.Error)
}

// add counts one proposal.
func (s *MutateSummary) add(st Status) {
	s.Rollouts++
	switch st {
	case StatusVerified:
		s.Verified++
	case StatusNone:
		s.NoVerifiedMutation++
	case StatusNotMutable:
		s.NotMutable++
	case StatusSkippedNoGold:
		s.SkippedNoGold++
	default:
		s.Errors++
	}
}

// summarize counts proposals and records.
func summarize(props []ProposeResult, recs []RecordResult) MutateSummary {
	var s MutateSummary
	for _, p := range props {
		s.add(p.Status)
	}
	for _, r := range recs {
		if r.Record != nil {
			s.Records++
		} else {
			s.RecordErrors++
		}
	}
	return s
}

// RecordResult is BuildRecord's answer for one request of a batch: the
// record, or Error (not verified, not mutable, bad input).
type RecordResult struct {
	Record *Record `json:"record,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// ProposeBatch proposes mutations for many rollouts, workers at a time (0
// means 4). Rollouts of the same question share one primitive cache and
// run one after the other, so a (route, query) they share is retrieved
// once. done, when non-nil, is called after each rollout (from several
// goroutines). Results are in input order and equal running Propose on
// each alone, except Searches. It stops early, leaving the remaining
// results with ctx's error, when ctx ends.
//
// A panic while proposing for a rollout is recovered (counted in
// rlsearch_recovered_panics_total{where="mutate"}, its stack logged): that
// rollout's result is StatusError naming it.
func (v *Verifier) ProposeBatch(ctx context.Context, ts []Trajectory, workers int, done func()) []ProposeResult {
	out, _ := v.proposeBatch(ctx, ts, workers, done)
	return out
}

// proposeBatch is ProposeBatch, also returning the first recovered panic
// (Serve answers it as the request's 500).
func (v *Verifier) proposeBatch(ctx context.Context, ts []Trajectory, workers int, done func()) ([]ProposeResult, error) {
	out := make([]ProposeResult, len(ts))
	var panicked atomic.Pointer[error]
	groups := map[string][]int{}
	var order []string
	for i, t := range ts {
		if _, ok := groups[t.Question]; !ok {
			order = append(order, t.Question)
		}
		groups[t.Question] = append(groups[t.Question], i)
	}
	if workers <= 0 {
		workers = 4
	}
	jobs := make(chan []int)
	var wg sync.WaitGroup
	for range min(workers, max(len(order), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idx := range jobs {
				cache := NewCache()
				for _, i := range idx {
					p, err := v.proposeGuarded(ctx, ts[i], cache)
					if errors.Is(err, recovered.ErrPanic) {
						panicked.CompareAndSwap(nil, &err)
					}
					out[i] = ProposeResult{Proposal: p}
					if err != nil {
						out[i].Error = err.Error()
						if out[i].Status != StatusSkippedNoGold {
							out[i].Status = StatusError
						}
					}
					if done != nil {
						done()
					}
				}
			}
		}()
	}
	for _, q := range order {
		jobs <- groups[q]
	}
	close(jobs)
	wg.Wait()
	if e := panicked.Load(); e != nil {
		return out, *e
	}
	return out, nil
}

// proposeGuarded is Propose with a panic recovered into its error.
func (v *Verifier) proposeGuarded(ctx context.Context, t Trajectory, cache *Cache) (p Proposal, err error) {
	defer recovered.Guard("mutate", &err)
	recovered.Probe("mutate")
	return v.Propose(ctx, t, cache)
}

// MutateRequest is the body of POST /v1/programs/mutate: either
// trajectories (step 1, propose) or records (step 2, build D_mut records),
// not both. Executions, MinGold and MaxVerified, when set, override the
// server's configuration for this request (Executions at most 256).
//
//	{"trajectories": [{"id": "r1", "question": "...", "gold_ids": ["wiki-1"], "golden_answers": ["x"],
//	    "turns": [{"role": "model", "text": "<code>print(sparse(\"q\", k=3))</code>"}, {"role": "observation", "text": "..."}]}]}
//	{"records": [{"trajectory": {...}, "program": {"queries": ["q"], "mode": "sparse", "width": 5, "rerank": 0, "print": 5},
//	    "continuation": "... <answer>x</answer>"}]}
type MutateRequest struct {
	Trajectories []Trajectory    `json:"trajectories,omitempty"`
	Records      []RecordRequest `json:"records,omitempty"`
	Executions   int             `json:"executions,omitempty"`
	MinGold      int             `json:"min_gold,omitempty"`
	MaxVerified  int             `json:"max_verified,omitempty"`
}

// MutateResponse answers a MutateRequest: Proposals for trajectories,
// Records for records, one per input in order, and Summary, their counts
// by outcome.
type MutateResponse struct {
	Proposals []ProposeResult `json:"proposals,omitempty"`
	Records   []RecordResult  `json:"records,omitempty"`
	Summary   MutateSummary   `json:"summary"`
}

// DecodeMutateRequest parses and checks a request body with the decoder of
// every JSON endpoint (internal/jsonbody). Errors wrap ErrBadArgument and
// rlsearch.ErrBadInput; field names the bad field ("" for the body itself).
func DecodeMutateRequest(r io.Reader) (MutateRequest, string, error) {
	var req MutateRequest
	body, err := io.ReadAll(r)
	if err != nil {
		return req, "", fmt.Errorf("%w: read body: %w", ErrBadArgument, err)
	}
	if err := jsonbody.Decode(body, &req, jsonbody.Reject); err != nil {
		return req, fieldOf(err), fmt.Errorf("%w: %w", ErrBadArgument, err)
	}
	if err := req.Check(); err != nil {
		return req, fieldOf(err), err
	}
	return req, "", nil
}

// Check validates a decoded request. Errors are *rlsearch.FieldError
// values wrapping ErrBadArgument and naming the field; more than
// DefaultMaxBatchPrograms items also wraps rlsearch.ErrTooLarge.
func (req MutateRequest) Check() error {
	n := len(req.Trajectories) + len(req.Records)
	switch {
	case len(req.Trajectories) > 0 && len(req.Records) > 0:
		return badArg("records", "give trajectories or records, not both")
	case n == 0:
		return badArg("trajectories", "no trajectories and no records")
	case n > DefaultMaxBatchPrograms:
		return rlsearch.TooLarge("trajectories", "%d items, at most %d per request", n, DefaultMaxBatchPrograms)
	case req.Executions < 0 || req.Executions > MaxExecutions:
		return badArg("executions", "executions %d, want 0..%d", req.Executions, MaxExecutions)
	case req.MinGold < 0:
		return badArg("min_gold", "min_gold %d is negative", req.MinGold)
	case req.MaxVerified < 0:
		return badArg("max_verified", "max_verified %d is negative", req.MaxVerified)
	}
	for i, t := range req.Trajectories {
		if g := len(t.GoldIDs) + len(t.GoldPassageIDs); g > MaxGoldIDs {
			return rlsearch.TooLarge(fmt.Sprintf("trajectories[%d].gold_ids", i), "%d gold ids, at most %d (MaxGoldIDs) per trajectory", g, MaxGoldIDs)
		}
		if err := t.Validate(); err != nil {
			return &rlsearch.FieldError{Field: fmt.Sprintf("trajectories[%d].turns[%d].role", i, t.badRole()), Err: err}
		}
	}
	for i, r := range req.Records {
		if g := len(r.Trajectory.GoldIDs) + len(r.Trajectory.GoldPassageIDs); g > MaxGoldIDs {
			return rlsearch.TooLarge(fmt.Sprintf("records[%d].trajectory.gold_ids", i), "%d gold ids, at most %d (MaxGoldIDs) per trajectory", g, MaxGoldIDs)
		}
		if err := r.Trajectory.Validate(); err != nil {
			return &rlsearch.FieldError{Field: fmt.Sprintf("records[%d].trajectory.turns[%d].role", i, r.Trajectory.badRole()), Err: err}
		}
	}
	return nil
}

// With returns a verifier with the request's overrides applied.
func (v *Verifier) with(req MutateRequest) (*Verifier, error) {
	if req.Executions == 0 && req.MinGold == 0 && req.MaxVerified == 0 {
		return v, nil
	}
	cfg := v.cfg
	if req.Executions > 0 {
		cfg.Executions = req.Executions
	}
	if req.MinGold > 0 {
		cfg.MinGold = req.MinGold
	}
	if req.MaxVerified > 0 {
		cfg.MaxVerified = req.MaxVerified
	}
	cfg.Space = v.space
	return NewVerifier(v.rt, cfg)
}

// Serve answers POST /v1/programs/mutate (the HTTP side is
// server's): proposals for trajectories, records for records, one
// per input in order, even when some rollouts are not mutable or have no
// verified mutation (their Status and Error say why), and their summary. It returns Check's error for a
// bad request and ctx's error when ctx ends. Safe for concurrent use.
func (v *Verifier) Serve(ctx context.Context, req MutateRequest) (MutateResponse, error) {
	if err := req.Check(); err != nil {
		return MutateResponse{}, err
	}
	vv, err := v.with(req)
	if err != nil {
		return MutateResponse{}, err
	}
	var resp MutateResponse
	if len(req.Trajectories) > 0 {
		var perr error
		resp.Proposals, perr = vv.proposeBatch(ctx, req.Trajectories, 0, nil)
		if perr != nil {
			return MutateResponse{}, perr
		}
		resp.Summary = summarize(resp.Proposals, nil)
		return resp, ctx.Err()
	}
	resp.Records = make([]RecordResult, len(req.Records))
	for i, r := range req.Records {
		rec, err := vv.BuildRecord(ctx, r, nil)
		if err != nil {
			if ctx.Err() != nil {
				return resp, ctx.Err()
			}
			resp.Records[i].Error = err.Error()
			continue
		}
		resp.Records[i].Record = &rec
	}
	resp.Summary = summarize(nil, resp.Records)
	return resp, nil
}
