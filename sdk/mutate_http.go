package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/rlsearch/rlsearch/internal/server"
)

// ProposeResult is Propose's answer for one rollout of a batch: the
// proposal, or Error when that rollout could not be searched (no gold, bad
// roles, an index failure).
type ProposeResult struct {
	Proposal
	Error string `json:"error,omitempty"`
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
func (v *Verifier) ProposeBatch(ctx context.Context, ts []Trajectory, workers int, done func()) []ProposeResult {
	out := make([]ProposeResult, len(ts))
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
					p, err := v.Propose(ctx, ts[i], cache)
					out[i] = ProposeResult{Proposal: p}
					if err != nil {
						out[i].Error = err.Error()
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
	return out
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
// Records for records, one per input in order.
type MutateResponse struct {
	Proposals []ProposeResult `json:"proposals,omitempty"`
	Records   []RecordResult  `json:"records,omitempty"`
}

// DecodeMutateRequest parses and checks a request body. Errors wrap
// ErrBadArgument; field names the bad field ("" for the body itself).
func DecodeMutateRequest(r io.Reader) (MutateRequest, string, error) {
	var req MutateRequest
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, "", fmt.Errorf("%w: body is not a valid request: %w", ErrBadArgument, err)
	}
	if dec.More() {
		return req, "", fmt.Errorf("%w: body has data after the JSON object", ErrBadArgument)
	}
	n := len(req.Trajectories) + len(req.Records)
	switch {
	case len(req.Trajectories) > 0 && len(req.Records) > 0:
		return req, "records", fmt.Errorf("%w: give trajectories or records, not both", ErrBadArgument)
	case n == 0:
		return req, "trajectories", fmt.Errorf("%w: no trajectories and no records", ErrBadArgument)
	case n > DefaultMaxBatchPrograms:
		return req, "trajectories", fmt.Errorf("%w: %d items, at most %d per request", ErrBadArgument, n, DefaultMaxBatchPrograms)
	case req.Executions < 0 || req.Executions > MaxExecutions:
		return req, "executions", fmt.Errorf("%w: executions %d, want 0..%d", ErrBadArgument, req.Executions, MaxExecutions)
	case req.MinGold < 0:
		return req, "min_gold", fmt.Errorf("%w: min_gold %d is negative", ErrBadArgument, req.MinGold)
	case req.MaxVerified < 0:
		return req, "max_verified", fmt.Errorf("%w: max_verified %d is negative", ErrBadArgument, req.MaxVerified)
	}
	for i, t := range req.Trajectories {
		if err := t.Validate(); err != nil {
			return req, fmt.Sprintf("trajectories[%d].turns", i), err
		}
	}
	for i, r := range req.Records {
		if err := r.Trajectory.Validate(); err != nil {
			return req, fmt.Sprintf("records[%d].trajectory.turns", i), err
		}
	}
	return req, "", nil
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

// Serve answers a decoded request.
func (v *Verifier) Serve(ctx context.Context, req MutateRequest) (MutateResponse, error) {
	vv, err := v.with(req)
	if err != nil {
		return MutateResponse{}, err
	}
	var resp MutateResponse
	if len(req.Trajectories) > 0 {
		resp.Proposals = vv.ProposeBatch(ctx, req.Trajectories, 0, nil)
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
	return resp, nil
}

// Handler serves POST /v1/programs/mutate (MutateRequest in,
// MutateResponse out; 200 even when some rollouts are not mutable or have
// no verified mutation). A malformed body is a 400 naming the field, a
// body over DefaultMaxBodyBytes a 413, another method a 405, a client gone
// 499. Safe for concurrent use.
func (v *Verifier) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			server.WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
			return
		}
		req, field, err := DecodeMutateRequest(http.MaxBytesReader(w, r.Body, DefaultMaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				server.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", DefaultMaxBodyBytes), "")
				return
			}
			server.WriteError(w, http.StatusBadRequest, err.Error(), field)
			return
		}
		resp, err := v.Serve(r.Context(), req)
		if err != nil {
			if r.Context().Err() != nil {
				server.WriteError(w, 499, "client closed the request", "")
				return
			}
			server.WriteError(w, http.StatusInternalServerError, err.Error(), "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	})
}
