package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"golang.org/x/sync/errgroup"
)

// Kind names a reward.
type Kind string

// The rewards of this package.
const (
	KindQA           Kind = "qa"           // QAScores
	KindRPL          Kind = "rpl"          // RPLResult
	KindSearchP1     Kind = "search-p1"    // SearchP1Result
	KindProRetrieval Kind = "proretrieval" // ProRetrievalResult
	KindRetrieval    Kind = "retrieval"    // RetrievalResult
)

// Kinds lists every Kind in a fixed order.
var Kinds = []Kind{KindQA, KindRPL, KindSearchP1, KindProRetrieval, KindRetrieval}

// ParseKind returns the Kind named s or an error listing the kinds.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("reward: unknown kind %q (want qa, rpl, search-p1, proretrieval or retrieval)", s)
}

// QARollout is one rollout for the QA metrics: Answer when given, else the
// last <answer> block of Response.
type QARollout struct {
	ID            string   `json:"id"`
	GoldenAnswers []string `json:"golden_answers"`
	Response      string   `json:"response,omitempty"`
	Answer        *string  `json:"answer,omitempty"`
}

// QAResult is QAScores with the rollout id.
type QAResult struct {
	ID string `json:"id"`
	QAScores
}

// DefaultWorkers is the default number of rollouts scored at once.
const DefaultWorkers = 8

// Config configures a Scorer. The zero value scores every kind with the
// defaults (lexical judge, no references, no executor).
type Config struct {
	RPL          RPLConfig
	SearchP1     SearchP1Config
	ProRetrieval ProRetrievalConfig
	Retrieval    RetrievalConfig
	// Workers scores up to this many rollouts of a batch at once (judge
	// calls overlap); 0 = DefaultWorkers.
	Workers int
	// NumericSign is the default of every kind's answer metrics ("" =
	// NumericSignSQuAD, Search-R1's behaviour); a request's "numeric_sign"
	// overrides it for that request. It replaces RPL.NumericSign and
	// SearchP1.NumericSign when set.
	NumericSign NumericSign
}

// Validate reports the first invalid field, naming it.
func (c *Config) Validate() error {
	if c.Workers < 0 {
		return fmt.Errorf("reward: Config.Workers %d is negative", c.Workers)
	}
	if _, err := ParseNumericSign(string(c.NumericSign)); err != nil {
		return fmt.Errorf("reward: Config.NumericSign: %w", err)
	}
	if _, err := ParseNumericSign(string(c.RPL.NumericSign)); err != nil {
		return fmt.Errorf("reward: Config.RPL.NumericSign: %w", err)
	}
	if err := c.SearchP1.Validate(); err != nil {
		return err
	}
	return c.ProRetrieval.Validate()
}

// Scorer scores batches of rollouts of any Kind from JSON. Safe for
// concurrent use when the configured judge, executor and token counters
// are.
type Scorer struct {
	cfg Config
	p1  *SearchP1
	pr  *ProRetrieval
}

// New validates cfg and builds a Scorer.
func New(cfg Config) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.NumericSign != "" {
		cfg.RPL.NumericSign, cfg.SearchP1.NumericSign = cfg.NumericSign, cfg.NumericSign
	}
	p1, err := NewSearchP1(cfg.SearchP1)
	if err != nil {
		return nil, err
	}
	pr, err := NewProRetrieval(cfg.ProRetrieval)
	if err != nil {
		return nil, err
	}
	return &Scorer{cfg: cfg, p1: p1, pr: pr}, nil
}

// JudgeName is the name of the Search-P1 judge in use.
func (s *Scorer) JudgeName() string { return s.p1.cfg.Judge.Name() }

// InputError is a bad rollout in a batch: Index is its position, Field
// the JSON path of the bad field inside it ("" for the rollout as a
// whole). It wraps rlsearch.ErrBadInput.
type InputError struct {
	Index int
	Field string
	Err   error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("reward: %s: %v", e.Path(), e.Err)
}

// Path is "rollouts[i]" or "rollouts[i].field".
func (e *InputError) Path() string {
	p := fmt.Sprintf("rollouts[%d]", e.Index)
	if e.Field != "" {
		p += "." + e.Field
	}
	return p
}

// FieldPath is Path (rlsearch.FieldPather: the HTTP layer's "field").
func (e *InputError) FieldPath() string { return e.Path() }

// Unwrap returns rlsearch.ErrBadInput and the cause.
func (e *InputError) Unwrap() []error { return []error{rlsearch.ErrBadInput, e.Err} }

// decodeRollout decodes raw into v, naming the bad field on error. Keys
// that fold onto a field of v ("Response", "golden-answers", "gold_IDs")
// are refused as near-misses (jsonbody.NearMiss), as on every other
// endpoint: encoding/json would take "Response" silently and ignore
// "golden-answers", so a client's typo would score every rollout 0. Other
// unknown keys are ignored (trainers send extras such as data_source).
func decodeRollout(i int, raw json.RawMessage, v any) error {
	if k := jsonbody.Kind(raw); k != "object" {
		return &InputError{Index: i, Err: fmt.Errorf("a rollout must be a JSON object, got %s", k)}
	}
	err := jsonbody.Decode(raw, v, jsonbody.Ignore)
	if err == nil {
		return nil
	}
	var fe *rlsearch.FieldError
	if errors.As(err, &fe) && fe.Field != "" {
		return &InputError{Index: i, Field: fe.Field, Err: fe.Err}
	}
	// encoding/json's own error (a custom decoder's, inside turns) names
	// the field through its UnmarshalTypeError.
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &InputError{Index: i, Field: te.Field, Err: fmt.Errorf("want %s, got JSON %s", te.Type, te.Value)}
		}
		return &InputError{Index: i, Err: err}
	}
	return nil
}

// hasKey reports whether the JSON object raw has the key (true when raw
// does not parse: decodeRollout reports that). Called only for an empty
// field, to tell "" from a missing key.
func hasKey(raw json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return true
	}
	_, ok := m[key]
	return ok
}

// Per-rollout size limits, checked before any rollout is scored (an
// *InputError, 400 over HTTP). Scoring is linear in the response but
// multiplies golds by answer length (contains, F1) and plan steps by
// tool calls (Search-P1 coverage), so without them one 4.5 MB rollout held
// a core for a minute. Real rollouts are far below: HotpotQA/MuSiQue/NQ
// list ≤ 20 gold answers, Search-P1 plans a few steps (paper §3.2) and
// Search-R1-style policies make ≤ ~10 tool calls.
const (
	MaxGolds     = 1000 // golden_answers entries per rollout
	MaxPlanSteps = 256  // plan / reference_plan steps (given or parsed from the response)
	MaxToolCalls = 1024 // <tool_call> blocks in a Search-P1 response
)

// checkGolds refuses more than MaxGolds gold answers.
func checkGolds(i int, golds []string) error {
	if len(golds) > MaxGolds {
		return &InputError{Index: i, Field: "golden_answers", Err: fmt.Errorf("%d gold answers, at most %d per rollout", len(golds), MaxGolds)}
	}
	return nil
}

// checkSearchP1Size refuses plans longer than MaxPlanSteps and responses
// with more than MaxToolCalls tool calls.
func checkSearchP1Size(i int, r SearchP1Rollout) error {
	for _, c := range []struct {
		field string
		n     int
	}{{"plan", len(r.Plan)}, {"reference_plan", len(r.ReferencePlan)}} {
		if c.n > MaxPlanSteps {
			return &InputError{Index: i, Field: c.field, Err: fmt.Errorf("%d steps, at most %d", c.n, MaxPlanSteps)}
		}
	}
	if n := strings.Count(r.Response, "<tool_call>"); n > MaxToolCalls {
		return &InputError{Index: i, Field: "response", Err: fmt.Errorf("%d <tool_call> blocks, at most %d", n, MaxToolCalls)}
	}
	if len(r.Plan) == 0 {
		if n := len(ParseResponse(r.Response).Plan); n > MaxPlanSteps {
			return &InputError{Index: i, Field: "response", Err: fmt.Errorf("plan of %d steps, at most %d", n, MaxPlanSteps)}
		}
	}
	return nil
}

// missingResponse is the error of a rollout without "response": a typo of
// the key ("respnse", "output") would otherwise score the rollout 0.
func missingResponse(i int, what string) error {
	return &InputError{Index: i, Field: "response", Err: fmt.Errorf("missing \"response\" %s", what)}
}

func hasText(ss []string) bool {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return true
		}
	}
	return false
}

// prepare decodes and checks rollout i, returning a function that scores
// it; o holds the batch's options, with the Scorer's defaults filled in.
func (s *Scorer) prepare(kind Kind, i int, raw json.RawMessage, o ScoreOptions) (func(context.Context) (any, error), error) {
	switch kind {
	case KindQA:
		var r QARollout
		if err := decodeRollout(i, raw, &r); err != nil {
			return nil, err
		}
		if !hasText(r.GoldenAnswers) {
			return nil, &InputError{Index: i, Field: "golden_answers", Err: errors.New("no gold answer")}
		}
		if err := checkGolds(i, r.GoldenAnswers); err != nil {
			return nil, err
		}
		if r.Answer == nil && r.Response == "" && !hasKey(raw, "response") {
			return nil, missingResponse(i, `(the policy's text, "" when it wrote nothing; or "answer")`)
		}
		return func(context.Context) (any, error) {
			if r.Answer != nil {
				return QAResult{ID: r.ID, QAScores: ScoreQAWith(*r.Answer, true, r.GoldenAnswers, o.NumericSign)}, nil
			}
			a, ok := ExtractAnswer(r.Response)
			return QAResult{ID: r.ID, QAScores: ScoreQAWith(a, ok, r.GoldenAnswers, o.NumericSign)}, nil
		}, nil
	case KindRPL:
		var r RPLRollout
		if err := decodeRollout(i, raw, &r); err != nil {
			return nil, err
		}
		if !hasText(r.GoldenAnswers) && !hasText(r.GoldIDs) && !hasText(r.GoldPassageIDs) && !hasText(r.GoldTitles) {
			return nil, &InputError{Index: i, Field: "golden_answers", Err: errors.New("no gold answer and no gold support (gold_ids, gold_passage_ids, gold_titles)")}
		}
		if err := checkGolds(i, r.GoldenAnswers); err != nil {
			return nil, err
		}
		for j, t := range r.Turns {
			for _, c := range []struct {
				name string
				v    int
			}{{"retrieval_calls", t.RetrievalCalls}, {"candidates", t.Candidates}, {"printed_tokens", derefInt(t.PrintedTokens)}} {
				if c.v < 0 {
					return nil, &InputError{Index: i, Field: fmt.Sprintf("turns[%d].%s", j, c.name), Err: fmt.Errorf("must be ≥ 0, got %d", c.v)}
				}
			}
		}
		rc := s.cfg.RPL
		rc.NumericSign = o.NumericSign
		return func(context.Context) (any, error) { return ScoreRPL(rc, r), nil }, nil
	case KindSearchP1:
		var r SearchP1Rollout
		if err := decodeRollout(i, raw, &r); err != nil {
			return nil, err
		}
		if !hasText(r.GoldenAnswers) {
			return nil, &InputError{Index: i, Field: "golden_answers", Err: errors.New("no gold answer")}
		}
		if r.Response == "" && !hasKey(raw, "response") {
			return nil, missingResponse(i, `(the policy's text, "" when it wrote nothing)`)
		}
		if err := checkGolds(i, r.GoldenAnswers); err != nil {
			return nil, err
		}
		if err := checkSearchP1Size(i, r); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) { return s.p1.scoreAs(ctx, r, o.NumericSign) }, nil
	case KindRetrieval:
		return nil, fmt.Errorf("reward: internal: retrieval rollouts are scored as a batch")
	case KindProRetrieval:
		var r ProRetrievalRollout
		if err := decodeRollout(i, raw, &r); err != nil {
			return nil, err
		}
		if !hasText(r.GroundTruth) {
			return nil, &InputError{Index: i, Field: "ground_truth", Err: errors.New("empty ground-truth set")}
		}
		if r.Response == "" && !hasKey(raw, "response") {
			return nil, missingResponse(i, `(the policy's text, "" when it wrote nothing)`)
		}
		if !r.preExecuted() && s.pr.cfg.Executor == nil {
			return nil, &InputError{Index: i, Field: "executed", Err: ErrNoExecution}
		}
		return func(ctx context.Context) (any, error) { return s.pr.Score(ctx, r) }, nil
	}
	return nil, fmt.Errorf("%w: reward: unknown kind %q", rlsearch.ErrBadInput, kind)
}

// ScoreBatch decodes and scores rollouts (JSON objects of the Kind's
// rollout type: QARollout, RPLRollout, SearchP1Rollout,
// ProRetrievalRollout, RetrievalRollout) and returns one result per
// rollout, in order (QAResult, RPLResult, SearchP1Result,
// ProRetrievalResult, RetrievalResult). Retrieval rollouts are searched
// together: one Searcher call per (retriever, k) for the whole batch. Every rollout
// is checked before any is scored: a bad one returns an *InputError (which
// wraps rlsearch.ErrBadInput) and no results. A judge failure is reported
// in that rollout's result, not as an error; ctx ending returns ctx.Err().
// The returned slice is owned by the caller.
func (s *Scorer) ScoreBatch(ctx context.Context, kind Kind, rollouts []json.RawMessage) ([]any, error) {
	return s.ScoreBatchWith(ctx, kind, rollouts, ScoreOptions{})
}

// ScoreOptions override a Scorer's configuration for one batch; zero
// fields keep it.
type ScoreOptions struct {
	// NumericSign of the answer metrics (qa, rpl, search-p1; see
	// NumericSign); "" = Config.NumericSign.
	NumericSign NumericSign
}

// ScoreBatchWith is ScoreBatch with options. An invalid option returns a
// *rlsearch.FieldError naming "numeric_sign" (rlsearch.ErrBadInput).
func (s *Scorer) ScoreBatchWith(ctx context.Context, kind Kind, rollouts []json.RawMessage, o ScoreOptions) ([]any, error) {
	if o.NumericSign == "" {
		o.NumericSign = s.cfg.NumericSign
	}
	if o.NumericSign == "" {
		o.NumericSign = s.defaultSign(kind)
	}
	sign, err := ParseNumericSign(string(o.NumericSign))
	if err != nil {
		return nil, rlsearch.BadField("numeric_sign", "%v", err)
	}
	o.NumericSign = sign
	if kind == KindRetrieval {
		return s.scoreRetrievalBatch(ctx, rollouts)
	}
	fns := make([]func(context.Context) (any, error), len(rollouts))
	for i, raw := range rollouts {
		fn, err := s.prepare(kind, i, raw, o)
		if err != nil {
			return nil, err
		}
		fns[i] = fn
	}
	out := make([]any, len(rollouts))
	// Workers rollouts at a time; the first error cancels the rest.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, s.cfg.Workers))
	for i, fn := range fns {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			r, err := fn(gctx)
			out[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// defaultSign is the NumericSign a kind scores with when neither the
// batch nor Config.NumericSign sets one: its own configuration's.
func (s *Scorer) defaultSign(kind Kind) NumericSign {
	switch kind {
	case KindRPL:
		return s.cfg.RPL.NumericSign
	case KindSearchP1:
		return s.p1.cfg.NumericSign
	}
	return ""
}
