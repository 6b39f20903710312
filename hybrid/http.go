package hybrid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/server"
)

// HandlerConfig configures NewHandler. Zero fields mean the defaults.
type HandlerConfig struct {
	MaxPrograms  int   // programs per request, default 256
	MaxBodyBytes int64 // request body, default 8 MiB
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

// NewHandler serves POST /v1/hybrid/execute over the given collections
// (by Schema.Name). A malformed request is a 400 naming the field; a bad
// program is an error item in its slot (the batch still runs), so an RL
// trainer gets every other program's result; machine failures are 500.
// Safe for concurrent use.
func NewHandler(cols map[string]*Collection, cfg HandlerConfig) http.Handler {
	if cfg.MaxPrograms <= 0 {
		cfg.MaxPrograms = 256
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	return &handler{cols: cols, cfg: cfg}
}

type handler struct {
	cols map[string]*Collection
	cfg  HandlerConfig
}

func (h *handler) names() string {
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

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		server.WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, h.cfg.MaxBodyBytes+1))
	if err != nil {
		server.WriteError(w, http.StatusBadRequest, "read body: "+err.Error(), "")
		return
	}
	if int64(len(raw)) > h.cfg.MaxBodyBytes {
		server.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", h.cfg.MaxBodyBytes), "")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var req ExecuteRequest
	if err := dec.Decode(&req); err != nil {
		server.WriteError(w, http.StatusBadRequest, "bad JSON body: "+err.Error(), "")
		return
	}
	c, ok := h.cols[req.Collection]
	switch {
	case !ok:
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("unknown collection %q (have %s)", truncate(req.Collection, 60), h.names()), "collection")
		return
	case len(req.Programs) == 0:
		server.WriteError(w, http.StatusBadRequest, "programs must be a non-empty list", "programs")
		return
	case len(req.Programs) > h.cfg.MaxPrograms:
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("%d programs, at most %d", len(req.Programs), h.cfg.MaxPrograms), "programs")
		return
	case req.TopK < 0:
		server.WriteError(w, http.StatusBadRequest, "topk must be >= 0", "topk")
		return
	}
	items := make([]ExecuteItem, len(req.Programs))
	cps := make([]*Compiled, len(req.Programs))
	for i, pr := range req.Programs {
		var p Program
		d := json.NewDecoder(bytes.NewReader(pr))
		d.DisallowUnknownFields()
		if err := d.Decode(&p); err != nil {
			items[i] = ExecuteItem{Error: "bad program: " + err.Error(), Field: fmt.Sprintf("programs[%d]", i)}
			continue
		}
		cp, err := c.Compile(p)
		if err != nil {
			items[i] = errItem(i, err)
			continue
		}
		cps[i] = cp
	}
	res := c.ExecuteCompiled(r.Context(), cps)
	for i, rs := range res {
		if cps[i] == nil {
			continue
		}
		if rs.Err != nil {
			if !errors.Is(rs.Err, rlsearch.ErrBadInput) {
				server.WriteError(w, http.StatusInternalServerError, fmt.Sprintf("programs[%d]: %v", i, rs.Err), "")
				return
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
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keep <text_0> readable in error messages
	enc.Encode(ExecuteResponse{Results: items})
}

func errItem(i int, err error) ExecuteItem {
	field := fmt.Sprintf("programs[%d]", i)
	var pe *Error
	if errors.As(err, &pe) {
		field += "." + pe.Field
	}
	return ExecuteItem{Error: err.Error(), Field: field}
}
