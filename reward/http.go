package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/rlsearch/rlsearch/internal/server"
)

// HTTP defaults.
const (
	DefaultMaxBatch     = 4096     // rollouts per request
	DefaultMaxBodyBytes = 64 << 20 // bytes per request body
)

// HandlerConfig configures the reward endpoints.
type HandlerConfig struct {
	Scorer       *Scorer // required
	MaxBatch     int     // rollouts per request; 0 = DefaultMaxBatch
	MaxBodyBytes int64   // 0 = DefaultMaxBodyBytes
	// AfterBatch, when set, runs after every scored batch (for example
	// JudgeCache.Save); its error is logged, the response is still sent.
	AfterBatch func() error
	Log        *slog.Logger // nil = slog.Default()
}

// Endpoints returns the handlers of POST /v1/rewards/{qa,rpl,search-p1,proretrieval}
// by path, for server.Config.Extra. Each takes {"rollouts": [rollout, ...]}
// and answers {"kind": str, "judge": str, "rewards": [result, ...]} with one
// result per rollout in order (types as Scorer.ScoreBatch). Errors are the
// house JSON {"error", "field"}: 400 for a malformed body or rollout (field
// "rollouts[i].name"), 405 for another method, 413 for a body over
// MaxBodyBytes or more than MaxBatch rollouts, 499 when the client went
// away, 503 on a deadline, 500 only for faults. A judge failure is
// reported inside that rollout's result, never as a 5xx.
func Endpoints(cfg HandlerConfig) (map[string]http.Handler, error) {
	if cfg.Scorer == nil {
		return nil, errors.New("reward: HandlerConfig.Scorer is nil")
	}
	if cfg.MaxBatch < 0 {
		return nil, fmt.Errorf("reward: HandlerConfig.MaxBatch %d is negative", cfg.MaxBatch)
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("reward: HandlerConfig.MaxBodyBytes %d is negative", cfg.MaxBodyBytes)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := map[string]http.Handler{}
	for _, k := range Kinds {
		m["/v1/rewards/"+string(k)] = &handler{cfg: cfg, kind: k}
	}
	return m, nil
}

type handler struct {
	cfg  HandlerConfig
	kind Kind
}

type rewardRequest struct {
	Rollouts []json.RawMessage `json:"rollouts"`
}

type rewardResponse struct {
	Kind    Kind   `json:"kind"`
	Judge   string `json:"judge"`
	Rewards []any  `json:"rewards"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		server.WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
		return
	}
	body := http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	var req rewardRequest
	dec := json.NewDecoder(body)
	if err := dec.Decode(&req); err != nil {
		var mb *http.MaxBytesError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mb):
			server.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", h.cfg.MaxBodyBytes), "")
		case errors.As(err, &te):
			server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("want %s, got JSON %s", te.Type, te.Value), te.Field)
		default:
			server.WriteError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error(), "")
		}
		return
	}
	if dec.More() {
		server.WriteError(w, http.StatusBadRequest, "body holds more than one JSON value", "")
		return
	}
	if req.Rollouts == nil {
		server.WriteError(w, http.StatusBadRequest, `missing "rollouts"`, "rollouts")
		return
	}
	if len(req.Rollouts) > h.cfg.MaxBatch {
		server.WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%d rollouts, at most %d per request", len(req.Rollouts), h.cfg.MaxBatch), "rollouts")
		return
	}
	res, err := h.cfg.Scorer.ScoreBatch(r.Context(), h.kind, req.Rollouts)
	if err != nil {
		var ie *InputError
		switch {
		case errors.As(err, &ie):
			server.WriteError(w, http.StatusBadRequest, ie.Err.Error(), ie.Path())
		case errors.Is(err, context.Canceled):
			server.WriteError(w, 499, "client closed request", "")
		case errors.Is(err, context.DeadlineExceeded):
			server.WriteError(w, http.StatusServiceUnavailable, "deadline exceeded", "")
		default:
			server.WriteError(w, http.StatusInternalServerError, err.Error(), "")
		}
		return
	}
	if h.cfg.AfterBatch != nil {
		if err := h.cfg.AfterBatch(); err != nil {
			h.cfg.Log.Error("reward: after batch", "kind", h.kind, "err", err)
		}
	}
	b, err := json.Marshal(rewardResponse{Kind: h.kind, Judge: h.cfg.Scorer.JudgeName(), Rewards: res})
	if err != nil {
		server.WriteError(w, http.StatusInternalServerError, err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}
