package reward

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// JudgeKind names the judgement a JudgeRequest asks for.
type JudgeKind string

// The judgements Search-P1's rewards need (paper 001, §3.2.2-3.2.3, App. D.3).
const (
	// JudgeCoverage asks which of Steps are carried out by the trajectory
	// (Actions, the search queries it issued; Trajectory, its whole text).
	// Judgement.Covered has one entry per step, Score = covered/len(Steps).
	JudgeCoverage JudgeKind = "coverage"
	// JudgePlan asks for the quality r_planner ∈ [0,1] of the plan Steps
	// for Question.
	JudgePlan JudgeKind = "plan"
	// JudgeReasoning asks for the quality r_reason ∈ [0,1] of the reasoning
	// of a trajectory whose final Answer did not match Golds; Evidence is
	// the trajectory's reasoning and observation text.
	JudgeReasoning JudgeKind = "reasoning"
)

// JudgeRequest is one judgement to make. Fields a kind does not use are
// left empty. It is encoded as JSON for cache keys and LLM prompts, so
// field order and names are part of the cache key format.
type JudgeRequest struct {
	Kind       JudgeKind `json:"kind"`
	Question   string    `json:"question,omitempty"`
	Steps      []string  `json:"steps,omitempty"`
	Actions    []string  `json:"actions,omitempty"`
	Trajectory string    `json:"trajectory,omitempty"`
	Evidence   string    `json:"evidence,omitempty"`
	Answer     string    `json:"answer,omitempty"`
	Golds      []string  `json:"golds,omitempty"`
}

// Judgement is a judge's answer. For JudgeCoverage, Covered has
// len(Steps) entries and Score is their covered fraction (0 for no steps);
// for the other kinds Covered is nil and Score ∈ [0,1].
type Judgement struct {
	Covered []bool  `json:"covered,omitempty"`
	Score   float64 `json:"score"`
}

// Judge makes the step-coverage, plan and reasoning judgements of the
// Search-P1 reward. Implementations must be safe for concurrent use and
// return an error (never a panic) for a request they cannot judge; an
// error fails the rollout being scored, not the batch.
type Judge interface {
	Judge(ctx context.Context, req JudgeRequest) (Judgement, error)
	// Name identifies the judge and its configuration (for example the
	// model); it is part of cache keys and reported beside rewards.
	Name() string
}

// ErrJudge marks a judge that could not produce a valid judgement (bad
// reply, exhausted retries).
var ErrJudge = errors.New("reward: judge failed")

// Defaults of LexicalJudge (chosen here; the paper uses an LLM evaluator).
const (
	// DefaultCoverThreshold: a step is covered by an action holding at
	// least half of the step's content terms.
	DefaultCoverThreshold = 0.5
	// DefaultDuplicateJaccard: a plan step whose content-term Jaccard
	// similarity with an earlier step is at least 0.8 is a duplicate.
	DefaultDuplicateJaccard = 0.8
)

// planWords are words of plan and step phrasing that carry no content
// ("Search for X", "Step 2: identify Y"); they are dropped from content
// terms after judgeTerms (which already removes Lucene's 33 English
// stop words and stems with Porter, so these are stems).
var planWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`find search identify determine look up get check verify confirm retrieve
		answer question information info step first second third fourth next then final finally
		what which who whom whose when where why how query use using based result results
		about from out also need needs know learn obtain locate`) {
		for _, t := range judgeTerms(w) {
			planWords[t] = true
		}
	}
}

// contentTerms are the analysed terms of s (judgeTerms: UAX#29 words,
// lower-case, stop words, Porter stems) without planWords, deduplicated in
// first-seen order. When every term is a plan word, the analysed terms are
// returned so that a step is never empty only because of its phrasing.
func contentTerms(s string) []string {
	all := judgeTerms(s)
	var out []string
	seen := map[string]bool{}
	for _, t := range all {
		if !planWords[t] && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		for _, t := range all {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

func termSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, t := range judgeTerms(s) {
		m[t] = true
	}
	return m
}

// LexicalJudge is the deterministic default Judge. Its matching rules:
//
//   - Content terms of a text: judgeTerms, the judge's own pinned copy of
//     bm25.Analyze of 2026-12-02 (Lucene English analysis with
//     Porter stemming) minus plan phrasing words such as "search", "find",
//     "identify", "step", "then" (see planWords); a text of plan words only
//     keeps them.
//   - JudgeCoverage: step s is covered when some single action a contains
//     at least CoverThreshold of s's content terms (|C(s) ∩ T(a)| / |C(s)|,
//     T(a) all analysed terms of a). Only actions count (Trajectory is for
//     LLM judges): with no search, no step is carried out, and adding a
//     search never lowers coverage. Order-agnostic: permuting steps permutes
//     Covered, and permuting actions changes nothing.
//   - JudgePlan: 0 for an empty plan, else the fraction of steps that have
//     content terms and are not duplicates (content-term Jaccard ≥
//     DuplicateJaccard with an earlier step).
//   - JudgeReasoning: the largest, over golds, fraction of a gold answer's
//     analysed terms found in Evidence (0 without golds or evidence): the
//     path reached evidence naming the answer even though the final answer
//     missed it.
//
// The zero value is ready to use with the defaults. Safe for concurrent use.
type LexicalJudge struct {
	CoverThreshold   float64 // (0,1]; 0 = DefaultCoverThreshold
	DuplicateJaccard float64 // (0,1]; 0 = DefaultDuplicateJaccard
}

// Name returns "lexical".
func (j LexicalJudge) Name() string { return "lexical" }

// Judge implements Judge. It returns an error wrapping ErrJudge for an
// unknown kind or a threshold outside (0,1].
func (j LexicalJudge) Judge(_ context.Context, req JudgeRequest) (Judgement, error) {
	ct, dj := j.CoverThreshold, j.DuplicateJaccard
	if ct == 0 {
		ct = DefaultCoverThreshold
	}
	if dj == 0 {
		dj = DefaultDuplicateJaccard
	}
	if !(ct > 0 && ct <= 1) || !(dj > 0 && dj <= 1) {
		return Judgement{}, fmt.Errorf("%w: lexical thresholds %v, %v outside (0,1]", ErrJudge, ct, dj)
	}
	switch req.Kind {
	case JudgeCoverage:
		return lexicalCoverage(req, ct), nil
	case JudgePlan:
		return Judgement{Score: lexicalPlan(req.Steps, dj)}, nil
	case JudgeReasoning:
		return Judgement{Score: lexicalReasoning(req.Evidence, req.Golds)}, nil
	}
	return Judgement{}, fmt.Errorf("%w: unknown judgement kind %q", ErrJudge, req.Kind)
}

func lexicalCoverage(req JudgeRequest, threshold float64) Judgement {
	sets := make([]map[string]bool, len(req.Actions))
	for i, a := range req.Actions {
		sets[i] = termSet(a)
	}
	out := Judgement{Covered: make([]bool, len(req.Steps))}
	n := 0
	for i, s := range req.Steps {
		c := contentTerms(s)
		if len(c) == 0 {
			continue
		}
		for _, set := range sets {
			hit := 0
			for _, t := range c {
				if set[t] {
					hit++
				}
			}
			if float64(hit)/float64(len(c)) >= threshold {
				out.Covered[i] = true
				n++
				break
			}
		}
	}
	if len(req.Steps) > 0 {
		out.Score = float64(n) / float64(len(req.Steps))
	}
	return out
}

func lexicalPlan(steps []string, dupJaccard float64) float64 {
	if len(steps) == 0 {
		return 0
	}
	var kept [][]string
	good := 0
	for _, s := range steps {
		c := contentTerms(s)
		if len(c) == 0 {
			continue
		}
		dup := false
		for _, k := range kept {
			if jaccard(c, k) >= dupJaccard {
				dup = true
				break
			}
		}
		kept = append(kept, c)
		if !dup {
			good++
		}
	}
	return float64(good) / float64(len(steps))
}

func jaccard(a, b []string) float64 {
	set := map[string]bool{}
	for _, t := range a {
		set[t] = true
	}
	inter, union := 0, len(set)
	for _, t := range b {
		if set[t] {
			inter++
		} else {
			union++
		}
	}
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func lexicalReasoning(evidence string, golds []string) float64 {
	if strings.TrimSpace(evidence) == "" {
		return 0
	}
	ev := termSet(evidence)
	best := 0.0
	for _, g := range golds {
		terms := judgeTerms(g)
		if len(terms) == 0 {
			continue
		}
		hit := 0
		for _, t := range terms {
			if ev[t] {
				hit++
			}
		}
		if f := float64(hit) / float64(len(terms)); f > best {
			best = f
		}
	}
	return best
}
