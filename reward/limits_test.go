package reward

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestRolloutSizeLimits: rollouts whose scoring cost multiplies two sizes
// (golds × answer for QA contains/F1, plan steps × tool calls for
// Search-P1 coverage) are refused before anything is scored, naming the
// field, instead of holding a core for a minute (fresh-user report: a
// 4.5 MB Search-P1 rollout took 60 s; 10,000 golds against a 2 MB answer
// took 4 s). At the limits they are still scored.
func TestRolloutSizeLimits(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	golds := func(n int) []string {
		g := make([]string, n)
		for i := range g {
			g[i] = "y" + strings.Repeat("q", i%7)
		}
		return g
	}
	call := `<tool_call>{"name": "search", "arguments": {"query": "a b c"}}</tool_call>`
	steps := func(n int) []string {
		st := make([]string, n)
		for i := range st {
			st[i] = "look it up"
		}
		return st
	}
	for _, tc := range []struct {
		name  string
		kind  Kind
		r     any
		field string // "" = accepted
	}{
		{"qa golds at limit", KindQA, QARollout{GoldenAnswers: golds(MaxGolds), Response: "<answer>y</answer>"}, ""},
		{"qa golds over", KindQA, QARollout{GoldenAnswers: golds(MaxGolds + 1), Response: "<answer>y</answer>"}, "golden_answers"},
		{"rpl golds over", KindRPL, RPLRollout{GoldenAnswers: golds(MaxGolds + 1), Response: "<answer>y</answer>"}, "golden_answers"},
		{"p1 golds over", KindSearchP1, SearchP1Rollout{GoldenAnswers: golds(MaxGolds + 1), Response: ""}, "golden_answers"},
		{"p1 plan at limit", KindSearchP1, SearchP1Rollout{GoldenAnswers: []string{"x"}, Plan: steps(MaxPlanSteps), Response: strings.Repeat(call, MaxToolCalls)}, ""},
		{"p1 plan over", KindSearchP1, SearchP1Rollout{GoldenAnswers: []string{"x"}, Plan: steps(MaxPlanSteps + 1), Response: ""}, "plan"},
		{"p1 reference plan over", KindSearchP1, SearchP1Rollout{GoldenAnswers: []string{"x"}, ReferencePlan: steps(MaxPlanSteps + 1), Response: ""}, "reference_plan"},
		{"p1 tool calls over", KindSearchP1, SearchP1Rollout{GoldenAnswers: []string{"x"}, Response: strings.Repeat(call, MaxToolCalls+1)}, "response"},
		{"p1 parsed plan over", KindSearchP1, SearchP1Rollout{GoldenAnswers: []string{"x"}, Response: "<plan>\n" + strings.Repeat("1. look it up\n", MaxPlanSteps+1) + "</plan>"}, "response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.r)
			_, err := s.ScoreBatch(context.Background(), tc.kind, []json.RawMessage{raw})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused at the limit: %v", err)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != tc.field || !errors.Is(err, rlsearch.ErrBadInput) {
				t.Fatalf("err %v, want an InputError on %q", err, tc.field)
			}
		})
	}
}
