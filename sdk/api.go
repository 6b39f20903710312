package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/rlsearch/rlsearch/internal/server"
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

// DecodeBatch parses and checks a batch request body. Errors wrap
// ErrBadArgument and name the field (field is "" when the body itself is
// malformed).
func DecodeBatch(r io.Reader) (BatchRequest, string, error) {
	var br BatchRequest
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return br, "", fmt.Errorf("%w: body is not a valid request: %w", ErrBadArgument, err)
	}
	if path, err := decodeStrict(raw, &br); err != nil {
		path = strings.TrimPrefix(path, "Request.") // the embedded inline program
		if path == "" || strings.HasPrefix(path, "programs.") || errors.Is(err, errUnknownField) {
			// Decode the programs one by one to name the index.
			var list struct {
				Programs []json.RawMessage `json:"programs"`
			}
			if json.Unmarshal(raw, &list) == nil {
				for i, p := range list.Programs {
					var r Request
					if path, err := decodeStrict(p, &r); err != nil {
						field := fmt.Sprintf("programs[%d]", i)
						if path != "" {
							field += "." + path
						}
						return br, field, fmt.Errorf("%w: %s %v", ErrBadArgument, field, err)
					}
				}
			}
		}
		if path == "" {
			return br, "", fmt.Errorf("%w: body is not a valid request: %v", ErrBadArgument, err)
		}
		return br, path, fmt.Errorf("%w: %s %v", ErrBadArgument, path, err)
	}
	if dec.More() {
		return br, "", fmt.Errorf("%w: body has data after the JSON object", ErrBadArgument)
	}
	single := br.Request.Code != "" || br.Request.Response != ""
	switch {
	case single && len(br.Programs) > 0:
		return br, "programs", fmt.Errorf("%w: give either programs or one inline program, not both", ErrBadArgument)
	case single:
		br.Programs = []Request{br.Request}
		br.Request = Request{}
	case len(br.Programs) == 0:
		return br, "programs", fmt.Errorf("%w: no programs (give programs: [...] or code)", ErrBadArgument)
	case len(br.Programs) > DefaultMaxBatchPrograms:
		return br, "programs", fmt.Errorf("%w: %d programs, at most %d per request", ErrBadArgument, len(br.Programs), DefaultMaxBatchPrograms)
	}
	for i, p := range br.Programs {
		if p.Code == "" && p.Response == "" {
			return br, fmt.Sprintf("programs[%d].code", i), fmt.Errorf("%w: programs[%d] has neither code nor response", ErrBadArgument, i)
		}
		if p.Budgets != nil {
			if err := p.Budgets.Validate(); err != nil {
				return br, fmt.Sprintf("programs[%d].budgets", i), fmt.Errorf("%w: programs[%d]: %v", ErrBadArgument, i, err)
			}
		}
	}
	return br, "", nil
}

// Options turns the request's switches into BatchOptions.
func (br BatchRequest) Options() BatchOptions {
	return BatchOptions{
		NoCoalesce: br.Coalesce != nil && !*br.Coalesce,
		NoMemo:     br.Memo != nil && !*br.Memo,
	}
}

// Handler serves POST /v1/programs/execute: a BatchRequest in, a
// BatchResponse out (200 even when programs fail: their failures are in
// each result's code and observation). A malformed body is a 400 naming the
// field, a body over Config.MaxBodyBytes a 413, another method a 405.
// Safe for concurrent use.
func (rt *Runtime) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			server.WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
			return
		}
		body := http.MaxBytesReader(w, r.Body, rt.cfg.MaxBodyBytes)
		br, field, err := DecodeBatch(body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				server.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", rt.cfg.MaxBodyBytes), "")
				return
			}
			server.WriteError(w, http.StatusBadRequest, err.Error(), field)
			return
		}
		res := rt.RunBatch(r.Context(), br.Programs, br.Options())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(BatchResponse{Results: res})
	})
}

var errUnknownField = errors.New("unknown field")

// decodeStrict unmarshals data into v, rejecting unknown fields. A type
// error comes back as "must be <kind>, got <JSON kind>" with path the
// field's JSON path ("budgets.max_steps"; list indexes are not in it); an
// unknown field wraps errUnknownField; path is "" for other errors.
func decodeStrict(data []byte, v any) (path string, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &te) && te.Field != "":
		return te.Field, fmt.Errorf("must be %s, got %s", jsonKind(te.Type), te.Value)
	case strings.Contains(err.Error(), "unknown field"):
		return "", fmt.Errorf("%w %s", errUnknownField, strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return "", err
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a " + t.Kind().String()
}
