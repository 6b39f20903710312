package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// Limits of POST /v1/hybrid/execute.
const (
	DefaultMaxPrograms  = 256     // programs per request
	DefaultMaxBodyBytes = 8 << 20 // request body (applied by the HTTP layer, server)
)

// ServiceConfig configures NewService. Zero fields mean the defaults.
type ServiceConfig struct {
	MaxPrograms int // programs per request, default DefaultMaxPrograms
}

// ExecuteRequest is the body of POST /v1/hybrid/execute.
type ExecuteRequest struct {
	Collection string            `json:"collection"`
	Programs   []json.RawMessage `json:"programs"`
	// TopK caps the ids returned per program (0 = the collection's MaxResults).
	TopK int `json:"topk"`
}

// ExecuteItem is one program's answer: the ranked ids and scores (see
// Result for the ranking), or an error naming the field at fault (ids and
// scores are then null).
type ExecuteItem struct {
	IDs    []string  `json:"ids"`
	Scores []float64 `json:"scores"`
	Total  int       `json:"total"`
	Timing *Timing   `json:"timing,omitempty"`
	Error  string    `json:"error,omitempty"`
	Field  string    `json:"field,omitempty"`
}

// ExecuteResponse is the answer of POST /v1/hybrid/execute: one item per program.
type ExecuteResponse struct {
	Results []ExecuteItem `json:"results"`
}

// Service answers POST /v1/hybrid/execute over the given collections (by
// Schema.Name) as a plain call; the HTTP side is server's. Safe for
// concurrent use.
type Service struct {
	cols map[string]*Collection
	cfg  ServiceConfig
}

// NewService serves cols (none is allowed: every request then names an
// unknown collection).
func NewService(cols map[string]*Collection, cfg ServiceConfig) *Service {
	if cfg.MaxPrograms <= 0 {
		cfg.MaxPrograms = DefaultMaxPrograms
	}
	return &Service{cols: cols, cfg: cfg}
}

func (h *Service) names() string {
	var n []string
	for k := range h.cols {
		n = append(n, k)
	}
	sort.Strings(n)
	if len(n) == 0 {
		return "none loaded; start serve with --collections DIR"
	}
	return strings.Join(n, ", ")
}

// Serve runs the request's programs. A malformed request is a
// *rlsearch.FieldError naming the field (over MaxPrograms it wraps
// rlsearch.ErrTooLarge); a bad program is an error item in its slot (the
// batch still runs), so an RL trainer gets every other program's result;
// a machine failure (not rlsearch.ErrBadInput) is returned as an error.
func (h *Service) Serve(ctx context.Context, req ExecuteRequest) (ExecuteResponse, error) {
	c, ok := h.cols[req.Collection]
	switch {
	case !ok:
		return ExecuteResponse{}, rlsearch.BadField("collection", "unknown collection %q (have %s)", truncate(req.Collection, 60), h.names())
	case len(req.Programs) == 0:
		return ExecuteResponse{}, rlsearch.BadField("programs", "programs must be a non-empty list")
	case len(req.Programs) > h.cfg.MaxPrograms:
		return ExecuteResponse{}, rlsearch.TooLarge("programs", "%d programs, at most %d per request", len(req.Programs), h.cfg.MaxPrograms)
	case req.TopK < 0:
		return ExecuteResponse{}, rlsearch.BadField("topk", "topk must be >= 0")
	}
	items := make([]ExecuteItem, len(req.Programs))
	cps := make([]*Compiled, len(req.Programs))
	for i, pr := range req.Programs {
		var p Program
		if k := jsonbody.Kind(pr); k != "object" {
			items[i] = ExecuteItem{Error: "bad program: must be an object, got " + k, Field: fmt.Sprintf("programs[%d]", i)}
			continue
		}
		if err := jsonbody.Decode(pr, &p, jsonbody.Reject); err != nil {
			field := fmt.Sprintf("programs[%d]", i)
			var fe *rlsearch.FieldError
			if errors.As(err, &fe) && fe.Field != "" {
				field += "." + fe.Field
			}
			items[i] = ExecuteItem{Error: "bad program: " + err.Error(), Field: field}
			continue
		}
		cp, err := c.Compile(p)
		if err != nil {
			items[i] = errItem(i, err)
			continue
		}
		cps[i] = cp
	}
	res := c.ExecuteCompiled(ctx, cps)
	for i, rs := range res {
		if cps[i] == nil {
			continue
		}
		if rs.Err != nil {
			if !errors.Is(rs.Err, rlsearch.ErrBadInput) {
				return ExecuteResponse{}, fmt.Errorf("programs[%d]: %w", i, rs.Err)
			}
			items[i] = errItem(i, rs.Err)
			continue
		}
		n := len(rs.IDs)
		if req.TopK > 0 {
			n = min(n, req.TopK)
		}
		t := rs.Timing
		items[i] = ExecuteItem{IDs: rs.IDs[:n], Scores: rs.Scores[:n], Total: rs.Total, Timing: &t}
		if items[i].IDs == nil {
			items[i].IDs, items[i].Scores = []string{}, []float64{}
		}
	}
	return ExecuteResponse{Results: items}, nil
}

func errItem(i int, err error) ExecuteItem {
	field := fmt.Sprintf("programs[%d]", i)
	var pe *Error
	if errors.As(err, &pe) {
		field += "." + pe.Field
	}
	return ExecuteItem{Error: err.Error(), Field: field}
}
