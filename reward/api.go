package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/rlsearch/rlsearch"
)

// Limits of the reward endpoints.
const (
	DefaultMaxBatch     = 4096     // rollouts per request
	DefaultMaxBodyBytes = 64 << 20 // bytes per request body (applied by the HTTP layer, server)
)

// ServiceConfig configures NewService.
type ServiceConfig struct {
	Scorer   *Scorer // required
	MaxBatch int     // rollouts per request; 0 = DefaultMaxBatch
	// AfterBatch, when set, runs after every scored batch (for example
	// JudgeCache.Save); its error is logged, the response is still sent.
	AfterBatch func() error
	Log        *slog.Logger // nil = slog.Default()
}

// Service answers the reward endpoints POST
// /v1/rewards/{qa,rpl,search-p1,proretrieval} as plain calls; the HTTP side
// (decoding, statuses) is server's. Safe for concurrent use.
type Service struct {
	cfg ServiceConfig
}

// NewService checks cfg and applies its defaults.
func NewService(cfg ServiceConfig) (*Service, error) {
	if cfg.Scorer == nil {
		return nil, errors.New("reward: ServiceConfig.Scorer is nil")
	}
	if cfg.MaxBatch < 0 {
		return nil, fmt.Errorf("reward: ServiceConfig.MaxBatch %d is negative", cfg.MaxBatch)
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Service{cfg: cfg}, nil
}

// Request is the body of every reward endpoint: {"rollouts": [rollout,
// ...], "numeric_sign": "strict"}, each rollout decoded by the Kind's
// scorer. NumericSign ("squad" or "strict"; absent = the server's
// default, squad unless configured) sets how this request's answer
// metrics treat the sign of numbers (see NumericSign); another value is a
// 400 naming "numeric_sign".
type Request struct {
	Rollouts    []json.RawMessage `json:"rollouts"`
	NumericSign NumericSign       `json:"numeric_sign,omitempty"`
}

// Response is the answer: {"kind", "judge", "rewards"} with one result
// per rollout, in order (types as Scorer.ScoreBatch).
type Response struct {
	Kind    Kind   `json:"kind"`
	Judge   string `json:"judge"`
	Rewards []any  `json:"rewards"`
}

// Serve scores req's rollouts with kind's reward. Errors: a
// *rlsearch.FieldError for a missing "rollouts", one wrapping
// rlsearch.ErrTooLarge for more than MaxBatch rollouts, an *InputError
// (rlsearch.ErrBadInput, field "rollouts[i].name") for a bad rollout, ctx's
// error when it ends; a judge failure is reported inside that rollout's
// result, never as an error.
func (s *Service) Serve(ctx context.Context, kind Kind, req Request) (Response, error) {
	if req.Rollouts == nil {
		return Response{}, rlsearch.BadField("rollouts", `missing "rollouts" (a list of rollouts)`)
	}
	if len(req.Rollouts) > s.cfg.MaxBatch {
		return Response{}, rlsearch.TooLarge("rollouts", "%d rollouts, at most %d per request", len(req.Rollouts), s.cfg.MaxBatch)
	}
	res, err := s.cfg.Scorer.ScoreBatchWith(ctx, kind, req.Rollouts, ScoreOptions{NumericSign: req.NumericSign})
	if err != nil {
		return Response{}, err
	}
	if s.cfg.AfterBatch != nil {
		if err := s.cfg.AfterBatch(); err != nil {
			s.cfg.Log.Error("reward: after batch", "kind", kind, "err", err)
		}
	}
	return Response{Kind: kind, Judge: s.cfg.Scorer.JudgeName(), Rewards: res}, nil
}
