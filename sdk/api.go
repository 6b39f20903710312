package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// Limits of the JSON batch API.
const (
	DefaultMaxBatchPrograms = 4096     // programs per request
	DefaultMaxBodyBytes     = 64 << 20 // request body
)

// BatchRequest is the body of POST /v1/programs/execute: either a list of
// programs, or one program given inline (its fields at the top level).
//
//	{"programs": [{"id": "a", "code": "print(sparse(question, k=3))", "question": "..."}], "coalesce": true}
//	{"code": "...", "question": "..."}
type BatchRequest struct {
	Programs []Request `json:"programs,omitempty"`
	Request
	// Coalesce merges concurrent retrieval calls (default true); Memo
	// memoises (route, query, width) within the batch (default true).
	Coalesce *bool `json:"coalesce,omitempty"`
	Memo     *bool `json:"memo,omitempty"`
}

// BatchResponse is the answer: one result per program, in order.
type BatchResponse struct {
	Results []Result `json:"results"`
}

// DecodeBatch parses and checks a batch request body with the decoder of
// every JSON endpoint (internal/jsonbody: one object, UTF-8, bounded
// nesting, unknown keys refused, field paths in errors). Errors wrap
// ErrBadArgument and rlsearch.ErrBadInput; field names the JSON path of the
// bad field ("" when the body itself is malformed).
func DecodeBatch(r io.Reader) (BatchRequest, string, error) {
	var br BatchRequest
	body, err := io.ReadAll(r)
	if err != nil {
		return br, "", fmt.Errorf("%w: read body: %w", ErrBadArgument, err)
	}
	if err := jsonbody.Decode(body, &br, jsonbody.Reject); err != nil {
		return br, fieldOf(err), fmt.Errorf("%w: %w", ErrBadArgument, err)
	}
	if err := br.Check(); err != nil {
		return br, fieldOf(err), err
	}
	return br, "", nil
}

// fieldOf is the field path an error names, "" when none.
func fieldOf(err error) string {
	var fp rlsearch.FieldPather
	if errors.As(err, &fp) {
		return fp.FieldPath()
	}
	return ""
}

// badArg is a *rlsearch.FieldError at field wrapping ErrBadArgument.
func badArg(field, format string, args ...any) error {
	return &rlsearch.FieldError{Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadArgument}, args...)...)}
}

// Check validates a decoded request and turns an inline program into a
// one-program batch. Errors are *rlsearch.FieldError values wrapping
// ErrBadArgument and naming the field; more than DefaultMaxBatchPrograms
// programs also wraps rlsearch.ErrTooLarge.
func (br *BatchRequest) Check() error {
	single := br.Request.Code != "" || br.Request.Response != ""
	switch {
	case single && len(br.Programs) > 0:
		return badArg("programs", "give either programs or one inline program, not both")
	case single:
		br.Programs = []Request{br.Request}
		br.Request = Request{}
	case len(br.Programs) == 0:
		return badArg("programs", "no programs (give programs: [...] or code)")
	case len(br.Programs) > DefaultMaxBatchPrograms:
		return rlsearch.TooLarge("programs", "%d programs, at most %d per request", len(br.Programs), DefaultMaxBatchPrograms)
	}
	for i, p := range br.Programs {
		if field, err := p.check(); err != nil {
			return badArg(fmt.Sprintf("programs[%d].%s", i, field), "programs[%d]: %v", i, err)
		}
	}
	return nil
}

// check reports what is wrong with one program request, and in which
// field: the HTTP batch and the JSONL file readers share it.
func (r Request) check() (field string, err error) {
	switch {
	case r.Code == "" && r.Response == "":
		return "code", errors.New("neither code nor response")
	case r.Code != "" && r.Response != "":
		return "response", errors.New("both code and response; give one (code runs as is, response runs its last <code> block)")
	case r.Budgets != nil:
		if err := r.Budgets.Validate(); err != nil {
			return "budgets", err
		}
	}
	return "", nil
}

// MaxBodyBytes is Config.MaxBodyBytes (defaults applied): the body limit
// the HTTP layer applies to POST /v1/programs/execute.
func (rt *Runtime) MaxBodyBytes() int64 { return rt.cfg.MaxBodyBytes }

// Serve answers POST /v1/programs/execute (the HTTP side is
// server's): it checks br (Check) and runs its programs as one
// batch. The response holds one result per program, in order, even when
// programs fail (their failures are in each result's code and
// observation); the error is a bad request, or rlsearch.ErrOverloaded
// (HTTP 503 with Retry-After) when the process heap guard stopped one of
// the programs (CodeOverloaded: Config.MaxHeapBytes), whose result would
// then not be its answer. Safe for concurrent use.
func (rt *Runtime) Serve(ctx context.Context, br BatchRequest) (BatchResponse, error) {
	if err := br.Check(); err != nil {
		return BatchResponse{}, err
	}
	res := rt.RunBatch(ctx, br.Programs, br.Options())
	if err := overloaded(res); err != nil {
		return BatchResponse{}, err
	}
	return BatchResponse{Results: res}, nil
}

// Options turns the request's switches into BatchOptions.
func (br BatchRequest) Options() BatchOptions {
	return BatchOptions{
		NoCoalesce: br.Coalesce != nil && !*br.Coalesce,
		NoMemo:     br.Memo != nil && !*br.Memo,
	}
}
