package reward

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Search-P1 defaults (paper 001).
const (
	DefaultLambdaFormat  = 0.1 // λ_f, App. B.2
	DefaultLambdaPath    = 0.3 // λ_p, App. B.2 and §5.1
	DefaultLambdaOutcome = 0.6 // λ_a, App. B.2 and §5.1
	// DefaultAlpha weighs r_acc against r_reason in the soft outcome
	// (§3.2.3). The paper does not give α; 0.5 (equal weight) is chosen here.
	DefaultAlpha = 0.5
	// DefaultDecay multiplies the soft outcome of an incorrect answer: App.
	// B.2, "a decay factor of 0.5 for partial matches when the final answer
	// is incorrect". It keeps every incorrect answer at most Decay < 1.0,
	// the reward of a correct one. Decay 1 gives §3.2.3's formula alone.
	DefaultDecay = 0.5
)

// Path combinations of the dual track (SearchP1Config.PathCombine). The
// paper (001, §3.2.2) scores both tracks and ablates each (Table 2) but the
// text available here does not say how they combine; "max" is the default
// chosen here: a trajectory earns path credit either by executing its own
// coherent plan or by covering the reference plan, which respects the
// diversity of valid paths the paper stresses, and a missing track never
// lowers the other.
const (
	PathMax  = "max"  // R_path = max(S_self, S_ref) (default)
	PathMean = "mean" // R_path = (S_self + S_ref)/2
	PathSelf = "self" // R_path = S_self (ablation "w/o reference alignment")
	PathRef  = "ref"  // R_path = S_ref (ablation "w/o self-consistency")
)

// Correctness rules (SearchP1Config.Correct).
const (
	CorrectContains = "contains" // answer contains a gold: the paper's ACC (001, §4.1); default
	CorrectEM       = "em"       // normalised exact match
)

// SearchP1Config configures the Search-P1 path-centric reward
// R_total = λ_p·R_path + λ_a·R_outcome + λ_f·R_format (paper 001, §3.2).
// Zero fields and empty strings take the documented defaults (the options
// convention, rlsearch.Off); a zero weight or factor (ablations) is asked
// for with rlsearch.Off (any negative value): Param. (The five numbers
// were *float64, nil meaning the default, until issue 37.)
type SearchP1Config struct {
	LambdaFormat  float64 // λ_f; 0 = DefaultLambdaFormat, Off = 0
	LambdaPath    float64 // λ_p; 0 = DefaultLambdaPath, Off = 0
	LambdaOutcome float64 // λ_a; 0 = DefaultLambdaOutcome, Off = 0
	Alpha         float64 // α ≤ 1; 0 = DefaultAlpha, Off = 0
	Decay         float64 // ≤ 1; 0 = DefaultDecay, Off = 0
	PathCombine   string  // PathMax (default), PathMean, PathSelf, PathRef
	Correct       string  // CorrectContains (default) or CorrectEM
	// Judge makes the coverage, plan and reasoning judgements; nil =
	// LexicalJudge{}.
	Judge Judge
	// References holds reference plans P_ref by question id (see
	// ReadReferences, VotePlan). A rollout may also carry its own.
	References map[string][]string
	// NumericSign of the answer metrics behind "correct" and r_acc; "" =
	// NumericSignSQuAD.
	NumericSign NumericSign
}

// Param is the value of a weight or factor v of SearchP1Config or
// ProRetrievalConfig under the options convention (rlsearch.Off): 0 means
// def, a negative value (rlsearch.Off) means 0, anything else itself.
func Param(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Validate reports the first invalid field, naming it.
func (c *SearchP1Config) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
		hi   float64
	}{
		{"LambdaFormat", c.LambdaFormat, math.MaxFloat64},
		{"LambdaPath", c.LambdaPath, math.MaxFloat64},
		{"LambdaOutcome", c.LambdaOutcome, math.MaxFloat64},
		{"Alpha", c.Alpha, 1},
		{"Decay", c.Decay, 1},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v > f.hi {
			return fmt.Errorf("reward: SearchP1Config.%s %v: want a finite value <= %v (0 = the default, negative = rlsearch.Off: 0)", f.name, f.v, f.hi)
		}
	}
	switch c.PathCombine {
	case "", PathMax, PathMean, PathSelf, PathRef:
	default:
		return fmt.Errorf("reward: SearchP1Config.PathCombine %q is not max, mean, self or ref", c.PathCombine)
	}
	switch c.Correct {
	case "", CorrectContains, CorrectEM:
	default:
		return fmt.Errorf("reward: SearchP1Config.Correct %q is not contains or em", c.Correct)
	}
	if _, err := ParseNumericSign(string(c.NumericSign)); err != nil {
		return fmt.Errorf("reward: SearchP1Config.NumericSign: %w", err)
	}
	return nil
}

// SearchP1Rollout is one rollout to score. Response is the policy's whole
// response with the environment's observations inserted (tags as in
// ParseResponse). Plan, when non-empty, overrides the plan parsed from the
// response; ReferencePlan, when non-empty, overrides the configured
// reference for QID.
type SearchP1Rollout struct {
	ID            string   `json:"id"`
	QID           string   `json:"qid,omitempty"` // question id for the reference cache; default ID
	Question      string   `json:"question"`
	GoldenAnswers []string `json:"golden_answers"`
	Response      string   `json:"response"`
	Plan          []string `json:"plan,omitempty"`
	ReferencePlan []string `json:"reference_plan,omitempty"`
}

// SearchP1Result holds every component of the Search-P1 reward of one
// rollout. Scores are in [0,1] except Total, which is at most
// λ_f+λ_p+λ_a (1 with the defaults).
type SearchP1Result struct {
	ID    string  `json:"id"`
	Total float64 `json:"total"`

	Format      float64     `json:"format"` // R_format
	FormatParts FormatParts `json:"format_parts"`

	Path         float64 `json:"path"`   // R_path
	SSelf        float64 `json:"s_self"` // r_planner × n_exec/n_plan × min(1, n_exec/n_actions)
	SRef         float64 `json:"s_ref"`  // covered reference steps / reference steps
	RPlanner     float64 `json:"r_planner"`
	NPlan        int     `json:"n_plan"`
	NExec        int     `json:"n_exec"`    // plan steps carried out by the actions
	NActions     int     `json:"n_actions"` // search queries issued
	NRef         int     `json:"n_ref"`
	NRefCovered  int     `json:"n_ref_covered"`
	RefAvailable bool    `json:"ref_available"`

	Outcome float64  `json:"outcome"` // R_outcome
	Correct bool     `json:"correct"`
	RAcc    float64  `json:"r_acc"`    // token F1 of the answer (partial match)
	RReason float64  `json:"r_reason"` // judged reasoning quality (0 when correct: not asked)
	QA      QAScores `json:"qa"`

	Judge string `json:"judge"`
	Error string `json:"error,omitempty"` // the judge failed; the scores are zero
}

// SearchP1 scores rollouts with the Search-P1 reward. It is safe for
// concurrent use when its Judge is.
type SearchP1 struct {
	cfg                   SearchP1Config
	lf, lp, la, al, decay float64
}

// NewSearchP1 validates cfg and applies its defaults.
func NewSearchP1(cfg SearchP1Config) (*SearchP1, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Judge == nil {
		cfg.Judge = LexicalJudge{}
	}
	if cfg.PathCombine == "" {
		cfg.PathCombine = PathMax
	}
	if cfg.Correct == "" {
		cfg.Correct = CorrectContains
	}
	return &SearchP1{cfg: cfg,
		lf: Param(cfg.LambdaFormat, DefaultLambdaFormat), lp: Param(cfg.LambdaPath, DefaultLambdaPath),
		la: Param(cfg.LambdaOutcome, DefaultLambdaOutcome), al: Param(cfg.Alpha, DefaultAlpha),
		decay: Param(cfg.Decay, DefaultDecay)}, nil
}

// SelfConsistency is S_self = r_planner × (n_exec/n_plan) × (n_exec/n_actions)
// (paper 001, §3.2.2), 0 when n_plan or n_actions is 0. The last factor is
// capped at 1 (one query may carry out two plan steps).
func SelfConsistency(rPlanner float64, nExec, nPlan, nActions int) float64 {
	if nPlan <= 0 || nActions <= 0 {
		return 0
	}
	return rPlanner * float64(nExec) / float64(nPlan) * math.Min(1, float64(nExec)/float64(nActions))
}

// SoftOutcome is R_outcome (paper 001, §3.2.3, App. B.2): 1 when correct,
// otherwise decay·(α·rAcc + (1−α)·rReason).
func SoftOutcome(correct bool, rAcc, rReason, alpha, decay float64) float64 {
	if correct {
		return 1
	}
	return decay * (alpha*rAcc + (1-alpha)*rReason)
}

// Score scores one rollout. The returned error is non-nil only for a
// cancelled ctx; a judge failure is reported in SearchP1Result.Error with
// zero scores, so one bad rollout does not fail a batch.
func (s *SearchP1) Score(ctx context.Context, r SearchP1Rollout) (SearchP1Result, error) {
	return s.scoreAs(ctx, r, s.cfg.NumericSign)
}

// scoreAs is Score with the answer metrics' NumericSign given.
func (s *SearchP1) scoreAs(ctx context.Context, r SearchP1Rollout, sign NumericSign) (SearchP1Result, error) {
	res, err := s.score(ctx, r, sign)
	if err != nil {
		if ctx.Err() != nil {
			return SearchP1Result{}, ctx.Err()
		}
		return SearchP1Result{ID: r.ID, Judge: s.cfg.Judge.Name(), Error: err.Error()}, nil
	}
	return res, nil
}

func (s *SearchP1) score(ctx context.Context, r SearchP1Rollout, sign NumericSign) (SearchP1Result, error) {
	j := s.cfg.Judge
	res := SearchP1Result{ID: r.ID, Judge: j.Name()}
	t := ParseResponse(r.Response)
	res.Format, res.FormatParts = t.Format()

	plan := t.Plan
	if len(r.Plan) > 0 {
		plan = r.Plan
	}
	res.NPlan, res.NActions = len(plan), len(t.Actions)
	if len(plan) > 0 {
		pj, err := j.Judge(ctx, JudgeRequest{Kind: JudgePlan, Question: r.Question, Steps: plan})
		if err != nil {
			return res, fmt.Errorf("plan judgement: %w", err)
		}
		res.RPlanner = clamp01(pj.Score)
		if len(t.Actions) > 0 {
			cj, err := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage, Question: r.Question, Steps: plan, Actions: t.Actions, Trajectory: r.Response})
			if err != nil {
				return res, fmt.Errorf("plan coverage judgement: %w", err)
			}
			res.NExec = countTrue(cj.Covered)
		}
	}
	res.SSelf = SelfConsistency(res.RPlanner, res.NExec, res.NPlan, res.NActions)

	ref := r.ReferencePlan
	if len(ref) == 0 {
		qid := r.QID
		if qid == "" {
			qid = r.ID
		}
		ref = s.cfg.References[qid]
	}
	if len(ref) > 0 {
		res.RefAvailable, res.NRef = true, len(ref)
		cj, err := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage, Question: r.Question, Steps: ref, Actions: t.Actions, Trajectory: r.Response})
		if err != nil {
			return res, fmt.Errorf("reference coverage judgement: %w", err)
		}
		res.NRefCovered = countTrue(cj.Covered)
		res.SRef = float64(res.NRefCovered) / float64(res.NRef)
	}
	res.Path = s.combine(res.SSelf, res.SRef, res.RefAvailable)

	ans, found := t.Answer()
	res.QA = ScoreQAWith(ans, found, r.GoldenAnswers, sign)
	if s.cfg.Correct == CorrectEM {
		res.Correct = res.QA.EM == 1
	} else {
		res.Correct = res.QA.Contains == 1
	}
	if !res.Correct {
		res.RAcc = res.QA.F1
		evidence := strings.Join(append(append([]string{}, t.Reasoning...), t.Observations...), "\n")
		rj, err := j.Judge(ctx, JudgeRequest{Kind: JudgeReasoning, Question: r.Question, Trajectory: r.Response,
			Evidence: evidence, Answer: ans, Golds: r.GoldenAnswers})
		if err != nil {
			return res, fmt.Errorf("reasoning judgement: %w", err)
		}
		res.RReason = clamp01(rj.Score)
	} else {
		res.RAcc = 1
	}
	res.Outcome = SoftOutcome(res.Correct, res.RAcc, res.RReason, s.al, s.decay)
	res.Total = s.lp*res.Path + s.la*res.Outcome + s.lf*res.Format
	return res, nil
}

// combine is the dual-track combination; without a reference only the
// self-consistency track exists, so R_path = S_self whatever the mode
// (except PathRef, which then gives 0).
func (s *SearchP1) combine(self, ref float64, haveRef bool) float64 {
	switch s.cfg.PathCombine {
	case PathSelf:
		return self
	case PathRef:
		return ref
	}
	if !haveRef {
		return self
	}
	if s.cfg.PathCombine == PathMean {
		return (self + ref) / 2
	}
	return math.Max(self, ref)
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

func clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	}
	return 0 // negative or NaN
}

// VotePlan builds a reference plan P_ref = Vote({T_i} | correct(T_i)) (paper
// 001, §3.2.1) from the step lists of K trajectories of one question (their
// plans or their search queries) and whether each answered correctly. The
// vote, chosen here, elects the medoid: the correct trajectory whose steps
// agree most with the other correct ones, agreement(i,k) being the mean of
// the judged coverage of i's steps by k's and of k's by i's; ties go to
// fewer steps, then the earlier trajectory. It returns a copy of the
// winner's steps, or nil when no correct trajectory has steps. It returns
// an error when len(correct) != len(steps) or the judge fails.
func VotePlan(ctx context.Context, j Judge, steps [][]string, correct []bool) ([]string, error) {
	if len(steps) != len(correct) {
		return nil, errors.New("reward: VotePlan needs one correctness flag per trajectory")
	}
	if j == nil {
		j = LexicalJudge{}
	}
	var cand []int
	for i := range steps {
		if correct[i] && len(steps[i]) > 0 {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return nil, nil
	}
	score := make([]float64, len(cand))
	for a := range cand {
		for b := range cand {
			if a == b {
				continue
			}
			c, err := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage, Steps: steps[cand[a]], Actions: steps[cand[b]]})
			if err != nil {
				return nil, fmt.Errorf("reward: vote: %w", err)
			}
			score[a] += c.Score / 2
			score[b] += c.Score / 2
		}
	}
	best := 0
	for a := 1; a < len(cand); a++ {
		switch {
		case score[a] > score[best]+1e-12:
			best = a
		case math.Abs(score[a]-score[best]) <= 1e-12 && len(steps[cand[a]]) < len(steps[cand[best]]):
			best = a
		}
	}
	return append([]string(nil), steps[cand[best]]...), nil
}
