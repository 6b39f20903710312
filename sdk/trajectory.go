package sdk

import (
	"context"
	"fmt"
	"strings"
)

// Turn roles of a rollout.
const (
	RolePrompt      = "prompt"      // the task prompt (question, instructions); never supervised
	RoleModel       = "model"       // text the policy wrote, with <code> programs and the final <answer>
	RoleObservation = "observation" // what the environment returned (printed evidence); never supervised
)

// Turn is one turn of a rollout. Role is RolePrompt, RoleModel or
// RoleObservation; the aliases "system" and "user" (prompt), "assistant"
// and "policy" (model), "tool" and "environment" (observation) are
// accepted. The rollout's text is the concatenation of its turns' texts.
type Turn struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Trajectory is one rollout of an RPL policy with its gold. GoldIDs
// (alias "gold_passage_ids", as in the question files) are seen by the
// verifier only; GoldenAnswers only by the record builder's answer check.
type Trajectory struct {
	ID             string   `json:"id,omitempty"`
	Question       string   `json:"question"`
	GoldenAnswers  []string `json:"golden_answers,omitempty"`
	GoldIDs        []string `json:"gold_ids,omitempty"`
	GoldPassageIDs []string `json:"gold_passage_ids,omitempty"`
	Turns          []Turn   `json:"turns"`
}

// Gold returns the gold support of t (GoldIDs, then GoldPassageIDs).
func (t Trajectory) Gold() Gold {
	return Gold{IDs: distinct(append(append([]string{}, t.GoldIDs...), t.GoldPassageIDs...))}
}

func normRole(r string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(r)) {
	case RolePrompt, "system", "user":
		return RolePrompt, true
	case RoleModel, "assistant", "policy":
		return RoleModel, true
	case RoleObservation, "tool", "environment":
		return RoleObservation, true
	}
	return "", false
}

// Validate checks the roles; the field named is "turns[i].role".
func (t Trajectory) Validate() error {
	if i := t.badRole(); i >= 0 {
		return fmt.Errorf("%w: turns[%d].role %q is not prompt, model or observation", ErrBadArgument, i, t.Turns[i].Role)
	}
	return nil
}

// badRole is the index of the first turn with an unknown role, or -1.
func (t Trajectory) badRole() int {
	for i, tu := range t.Turns {
		if _, ok := normRole(tu.Role); !ok {
			return i
		}
	}
	return -1
}

// codeBlock locates the last complete <code>…</code> block of s: the
// offsets of "<code>" and of the end of "</code>", as ExtractCode reads it.
func codeBlock(s string) (start, end int, ok bool) {
	e := strings.LastIndex(s, "</code>")
	if e < 0 {
		return 0, 0, false
	}
	b := strings.LastIndex(s[:e], "<code>")
	if b < 0 {
		return 0, 0, false
	}
	return b, e + len("</code>"), true
}

// lastProgram is the parsed last retrieval turn of a rollout.
type lastProgram struct {
	turn      int // index of the model turn
	codeStart int // byte offset of "<code>" in that turn
	prog      Program
	pool      []string
	obsTurn   int // index of the observation turn that followed, -1 if none
}

// parseLast finds the last retrieval turn of t (the last model turn with
// a complete <code> block) and reads its program in the typed form. The
// error wraps ErrNotMutable and says why.
func (v *Verifier) parseLast(t Trajectory) (lastProgram, error) {
	lp := lastProgram{turn: -1, obsTurn: -1}
	if err := t.Validate(); err != nil {
		return lp, err
	}
	for i := len(t.Turns) - 1; i >= 0; i-- {
		if r, _ := normRole(t.Turns[i].Role); r != RoleModel {
			continue
		}
		if b, _, ok := codeBlock(t.Turns[i].Text); ok {
			lp.turn, lp.codeStart = i, b
			break
		}
	}
	if lp.turn < 0 {
		return lp, fmt.Errorf("%w: no model turn with a <code> program", ErrNotMutable)
	}
	code, _ := ExtractCode(t.Turns[lp.turn].Text)
	p, err := Recognize(code)
	if err != nil {
		return lp, fmt.Errorf("%w: turn %d: %w", ErrNotMutable, lp.turn, err)
	}
	lp.prog = p
	var extra []string
	if v.cfg.PoolFromEarlierTurns {
		for i := lp.turn - 1; i >= 0; i-- {
			if r, _ := normRole(t.Turns[i].Role); r != RoleModel {
				continue
			}
			if c, ok := ExtractCode(t.Turns[i].Text); ok {
				if q, err := Recognize(c); err == nil {
					extra = append(extra, q.Queries...)
				}
			}
		}
	}
	lp.pool = Pool(p, extra...)
	if n := lp.turn + 1; n < len(t.Turns) {
		if r, _ := normRole(t.Turns[n].Role); r == RoleObservation {
			lp.obsTurn = n
		}
	}
	return lp, nil
}

// Proposal is the first step of the two-step API: the verified mutations
// of a rollout's last retrieval program, each with the continuation
// context the policy regenerates its continuation from.
type Proposal struct {
	ID string `json:"id,omitempty"`
	// Turn is the index of the mutated retrieval turn (-1 when none) and
	// Program its program in the typed form (nil when not mutable).
	Turn    int      `json:"turn"`
	Program *Program `json:"program,omitempty"`
	SearchResult
	// Contexts[i] is the continuation context of Verified[i]: the rollout's
	// text before the mutated turn's program, the mutated program in its
	// <code> block and its printed evidence in the observation wrapping.
	// Built from public text only (the policy's turns, the program, the
	// evidence), never from gold.
	Contexts []string `json:"contexts"`
}

// Propose searches the mutations of the last retrieval program of t (only
// that turn is mutated; its query pool is kept) and returns the verified
// ones with their continuation contexts. A rollout without a typed last
// program gives StatusNotMutable with the reason. cache, when non-nil, is
// the shared primitive cache (share it across the rollouts of one
// question); nil means a fresh one. Errors: ErrBadArgument (bad roles; no
// gold, with the Proposal's Status StatusSkippedNoGold), ctx's error,
// index failures.
func (v *Verifier) Propose(ctx context.Context, t Trajectory, cache *Cache) (Proposal, error) {
	pr := Proposal{ID: t.ID, Turn: -1, Contexts: []string{}}
	pr.Verified = []VerifiedMutation{}
	if err := t.Validate(); err != nil {
		return pr, err
	}
	gold := t.Gold()
	if len(gold.IDs) == 0 {
		pr.Status = StatusSkippedNoGold
		return pr, fmt.Errorf("%w: trajectory %q has no gold support ids (gold_ids): skipped, V_ret needs them", ErrBadArgument, t.ID)
	}
	lp, err := v.parseLast(t)
	if err != nil {
		pr.Status, pr.Reason = StatusNotMutable, err.Error()
		pr.Turn = lp.turn
		return pr, nil
	}
	pr.Turn, pr.Program = lp.turn, &lp.prog
	res, err := v.Search(ctx, lp.prog, lp.pool, gold, cache)
	if err != nil {
		return pr, err
	}
	pr.SearchResult = res
	for _, m := range res.Verified {
		sp := v.splice(t, lp, res.Original.Observation, m.Source, m.Observation)
		pr.Contexts = append(pr.Contexts, sp.text())
	}
	return pr, nil
}

// spliced is a rollout cut at its last retrieval turn with a new program
// and observation, as parts.
type spliced struct {
	parts []part
}

type part struct {
	kind string
	text string
}

func (s spliced) text() string {
	var sb strings.Builder
	for _, p := range s.parts {
		sb.WriteString(p.text)
	}
	return sb.String()
}

// Span kinds of a record.
const (
	SpanPrompt       = "prompt"       // prompt turns: never supervised
	SpanModel        = "model"        // the policy's earlier text (MutateConfig.SuperviseEarlierTurns)
	SpanProgram      = "program"      // the mutated program's <code> block: supervised
	SpanObservation  = "observation"  // observation turns and the new evidence: never supervised
	SpanContinuation = "continuation" // the regenerated continuation outside the answer: supervised
	SpanAnswer       = "answer"       // the answer inside <answer>…</answer>: supervised when correct
)

// splice builds the rollout's text up to the new observation: turns before
// the mutated one, that turn's text before <code>, the new program and its
// evidence. origObs is the original program's evidence (to reuse the
// observation turn's wrapping).
func (v *Verifier) splice(t Trajectory, lp lastProgram, origObs, src, obs string) spliced {
	var s spliced
	for _, tu := range t.Turns[:lp.turn] {
		r, _ := normRole(tu.Role)
		k := map[string]string{RolePrompt: SpanPrompt, RoleModel: SpanModel, RoleObservation: SpanObservation}[r]
		s.parts = append(s.parts, part{k, tu.Text})
	}
	s.parts = append(s.parts, part{SpanModel, t.Turns[lp.turn].Text[:lp.codeStart]})
	s.parts = append(s.parts, part{SpanProgram, "<code>\n" + src + "</code>"})
	s.parts = append(s.parts, part{SpanObservation, v.wrapObservation(t, lp, origObs, obs)})
	return s
}

func (v *Verifier) wrapObservation(t Trajectory, lp lastProgram, origObs, obs string) string {
	if v.cfg.ObservationTemplate != "" {
		return strings.Replace(v.cfg.ObservationTemplate, "{observation}", obs, 1)
	}
	if lp.obsTurn >= 0 && origObs != "" {
		turn := t.Turns[lp.obsTurn].Text
		if i := strings.Index(turn, origObs); i >= 0 {
			return turn[:i] + obs + turn[i+len(origObs):]
		}
	}
	return strings.Replace(DefaultObservationTemplate, "{observation}", obs, 1)
}
