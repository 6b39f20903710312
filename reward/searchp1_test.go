package reward

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func TestSelfConsistency(t *testing.T) {
	for _, tc := range []struct {
		r                      float64
		nExec, nPlan, nActions int
		want                   float64
	}{
		{1, 2, 2, 2, 1},
		{0.8, 2, 4, 2, 0.8 * 0.5 * 1}, // half the plan executed, no wasted action
		{1, 2, 2, 4, 1 * 1 * 0.5},     // plan executed with two extra searches
		{0.5, 1, 3, 2, 0.5 / 3 * 0.5}, // 0.0833...
		{1, 3, 3, 1, 1},               // one query carried out three steps: factor capped at 1
		{1, 0, 3, 2, 0},               // nothing executed
		{1, 0, 0, 2, 0},               // no plan
		{1, 2, 2, 0, 0},               // no action
	} {
		t.Run(fmt.Sprintf("%v/%d/%d/%d", tc.r, tc.nExec, tc.nPlan, tc.nActions), func(t *testing.T) {
			if got := SelfConsistency(tc.r, tc.nExec, tc.nPlan, tc.nActions); !near(got, tc.want) {
				t.Errorf("S_self = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSoftOutcome(t *testing.T) {
	for _, tc := range []struct {
		correct           bool
		acc, reason, a, d float64
		want              float64
	}{
		{true, 0, 0, 0.5, 0.5, 1},
		{true, 0.3, 0.9, 0.2, 1, 1},
		{false, 0.4, 0.8, 0.5, 0.5, 0.5 * (0.2 + 0.4)}, // 0.3
		{false, 0.4, 0.8, 0.25, 1, 0.1 + 0.6},          // paper formula without decay: 0.7
		{false, 1, 1, 0.5, 0.5, 0.5},                   // best incorrect answer stays at decay
		{false, 0, 0, 0.5, 0.5, 0},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			if got := SoftOutcome(tc.correct, tc.acc, tc.reason, tc.a, tc.d); !near(got, tc.want) {
				t.Errorf("R_outcome = %v, want %v", got, tc.want)
			}
		})
	}
}

// informantResponse is a two-search Search-P1 trajectory for the
// wiki_multihop question about The Informant!, answering ans.
func informantResponse(ans string) string {
	return `<reasoning>
Plan:
1. Find the film directed by Steven Soderbergh about a corporate whistleblower
2. Find the release year of that film
</reasoning>
<tool_call>{"name": "search", "arguments": {"query": "Steven Soderbergh film corporate whistleblower"}}</tool_call>
<tool_response>"The Informant!"
The Informant! is a 2009 American biographical comedy crime film directed by Steven Soderbergh.</tool_response>
<reasoning>The film is The Informant!</reasoning>
<tool_call>{"name": "search", "arguments": {"query": "The Informant! release year"}}</tool_call>
<tool_response>"The Informant!" It was released in September 2009.</tool_response>
<answer>` + ans + `</answer>`
}

var informantRef = []string{
	"Identify the whistleblower film by Steven Soderbergh",
	"Find the year The Informant! came out",
	"Find the director's birthplace",
}

func TestSearchP1Worked(t *testing.T) {
	s, err := NewSearchP1(SearchP1Config{References: map[string][]string{"q1": informantRef}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ans  string
		// hand-computed (see the comments of TestSearchP1Worked's cases)
		correct                bool
		rAcc, rReason, outcome float64
		total                  float64
	}{
		// Format 1 (one final answer, reasoning, 2/2 valid calls, balanced, no stray text).
		// Plan: 2 distinct steps, r_planner 1; both carried out by one query each:
		// S_self = 1·(2/2)·(2/2) = 1. Reference: steps 1 and 2 covered, the birthplace not:
		// S_ref = 2/3. R_path = max(1, 2/3) = 1.
		{"correct", "2009", true, 1, 0, 1, 0.3*1 + 0.6*1 + 0.1*1},
		// Wrong year: r_acc = F1("2010","2009") = 0; r_reason = share of gold terms in the
		// evidence = 1 ("2009" is in the observations); R_outcome = 0.5·(0.5·0 + 0.5·1) = 0.25.
		{"wrong", "2010", false, 0, 1, 0.25, 0.3*1 + 0.6*0.25 + 0.1*1},
		// Partial: "September 2009 film" contains "2009", so it is correct by ACC.
		{"contained", "September 2009 film", true, 1, 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Score(ctx, SearchP1Rollout{ID: "r", QID: "q1", Question: "What year did the film come out?",
				GoldenAnswers: []string{"2009"}, Response: informantResponse(tc.ans)})
			if err != nil || r.Error != "" {
				t.Fatalf("Score: %v %s", err, r.Error)
			}
			checks := []struct {
				name      string
				got, want float64
			}{
				{"format", r.Format, 1}, {"r_planner", r.RPlanner, 1}, {"s_self", r.SSelf, 1},
				{"s_ref", r.SRef, 2.0 / 3}, {"path", r.Path, 1}, {"r_acc", r.RAcc, tc.rAcc},
				{"r_reason", r.RReason, tc.rReason}, {"outcome", r.Outcome, tc.outcome}, {"total", r.Total, tc.total},
			}
			for _, c := range checks {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v (result %+v)", c.name, c.got, c.want, r)
				}
			}
			if r.NPlan != 2 || r.NExec != 2 || r.NActions != 2 || r.NRef != 3 || r.NRefCovered != 2 || !r.RefAvailable {
				t.Errorf("counts plan %d exec %d actions %d ref %d covered %d avail %v, want 2 2 2 3 2 true",
					r.NPlan, r.NExec, r.NActions, r.NRef, r.NRefCovered, r.RefAvailable)
			}
			if r.Correct != tc.correct {
				t.Errorf("correct = %v, want %v", r.Correct, tc.correct)
			}
		})
	}
}

func TestSearchP1PathCombine(t *testing.T) {
	// Without a plan S_self = 0, so the path is the reference track alone
	// (2/3) under max, 1/3 under mean, 0 under self.
	resp := strings.Replace(informantResponse("2009"), "Plan:\n1. Find the film directed by Steven Soderbergh about a corporate whistleblower\n2. Find the release year of that film\n", "Let me search.\n", 1)
	for _, tc := range []struct {
		mode string
		want float64
	}{{PathMax, 2.0 / 3}, {PathMean, 1.0 / 3}, {PathSelf, 0}, {PathRef, 2.0 / 3}} {
		t.Run(tc.mode, func(t *testing.T) {
			s, err := NewSearchP1(SearchP1Config{PathCombine: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := s.Score(context.Background(), SearchP1Rollout{ID: "x", GoldenAnswers: []string{"2009"}, Response: resp, ReferencePlan: informantRef})
			if r.NPlan != 0 || !near(r.Path, tc.want) {
				t.Errorf("n_plan %d path %v, want 0 and %v", r.NPlan, r.Path, tc.want)
			}
		})
	}
	// Without a reference, R_path is S_self whatever the mode (except ref).
	s, _ := NewSearchP1(SearchP1Config{PathCombine: PathMean})
	r, _ := s.Score(context.Background(), SearchP1Rollout{ID: "x", GoldenAnswers: []string{"2009"}, Response: informantResponse("2009")})
	if r.RefAvailable || !near(r.Path, 1) {
		t.Errorf("no reference: ref_available %v path %v, want false and S_self = 1", r.RefAvailable, r.Path)
	}
}

func TestSearchP1ConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   SearchP1Config
		field string
	}{
		{SearchP1Config{LambdaPath: math.NaN()}, "LambdaPath"},
		{SearchP1Config{Alpha: 1.5}, "Alpha"},
		{SearchP1Config{Decay: math.Inf(-1)}, "Decay"},
		{SearchP1Config{PathCombine: "sum"}, "PathCombine"},
		{SearchP1Config{Correct: "f1"}, "Correct"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.field)
			}
		})
	}
	if _, err := NewSearchP1(SearchP1Config{LambdaFormat: rlsearch.Off}); err != nil {
		t.Errorf("a zero weight (ablation, rlsearch.Off) must be allowed: %v", err)
	}
}

// TestSearchP1Metamorphic: permuting the reference plan's steps or the
// trajectory's search steps does not change reference alignment, and a
// correct answer always gives R_outcome = 1, whatever else the trajectory
// holds.
func TestSearchP1Metamorphic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("film director year born river canal album band city team novel author war king capital")
	phrase := func(n int) string {
		var b []string
		for range n {
			b = append(b, words[rng.IntN(len(words))])
		}
		return strings.Join(b, " ")
	}
	s, _ := NewSearchP1(SearchP1Config{})
	ctx := context.Background()
	for trial := range 200 {
		ref := make([]string, 1+rng.IntN(5))
		for i := range ref {
			ref[i] = "Find the " + phrase(1+rng.IntN(3))
		}
		queries := make([]string, 1+rng.IntN(4))
		for i := range queries {
			queries[i] = phrase(1 + rng.IntN(4))
		}
		gold := words[rng.IntN(len(words))]
		build := func(qs []string, ans string) string {
			var b strings.Builder
			b.WriteString("<reasoning>1. " + phrase(2) + "\n2. " + phrase(2) + "</reasoning>")
			for _, q := range qs {
				fmt.Fprintf(&b, "<tool_call>%s</tool_call><tool_response>%s</tool_response>", q, phrase(8))
			}
			b.WriteString("<answer>" + ans + "</answer>")
			return b.String()
		}
		base, _ := s.Score(ctx, SearchP1Rollout{ID: "a", GoldenAnswers: []string{gold}, Response: build(queries, phrase(2)), ReferencePlan: ref})
		pref := append([]string(nil), ref...)
		rng.Shuffle(len(pref), func(i, j int) { pref[i], pref[j] = pref[j], pref[i] })
		pq := append([]string(nil), queries...)
		rng.Shuffle(len(pq), func(i, j int) { pq[i], pq[j] = pq[j], pq[i] })
		perm, _ := s.Score(ctx, SearchP1Rollout{ID: "a", GoldenAnswers: []string{gold}, Response: build(pq, phrase(2)), ReferencePlan: pref})
		if base.SRef != perm.SRef || base.NRefCovered != perm.NRefCovered {
			t.Fatalf("trial %d: reference alignment %v (%d) changed to %v (%d) under reordering\nref %q\nqueries %q",
				trial, base.SRef, base.NRefCovered, perm.SRef, perm.NRefCovered, ref, queries)
		}
		good, _ := s.Score(ctx, SearchP1Rollout{ID: "a", GoldenAnswers: []string{gold}, Response: build(queries, phrase(1)+" "+gold+" "+phrase(1)), ReferencePlan: ref})
		if !good.Correct || good.Outcome != 1 {
			t.Fatalf("trial %d: correct answer gave correct=%v R_outcome=%v, want 1", trial, good.Correct, good.Outcome)
		}
		if !base.Correct && base.Outcome > DefaultDecay {
			t.Fatalf("trial %d: incorrect answer R_outcome %v above decay %v", trial, base.Outcome, DefaultDecay)
		}
	}
}

func TestVotePlan(t *testing.T) {
	steps := [][]string{
		{"search Steven Soderbergh whistleblower film", "search The Informant release year"}, // agrees with 2 and 3
		{"Soderbergh whistleblower film", "Informant release year"},
		{"The Informant year released", "whistleblower film Soderbergh", "extra weather check"},
		{"capital of France"}, // incorrect trajectory: not a candidate
	}
	got, err := VotePlan(context.Background(), nil, steps, []bool{true, true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != steps[0][0] && got[0] != steps[1][0] {
		t.Errorf("VotePlan = %q, want the two-step plan the others agree with", got)
	}
	if got, _ := VotePlan(context.Background(), nil, steps, []bool{false, false, false, false}); got != nil {
		t.Errorf("VotePlan without a correct trajectory = %q, want nil", got)
	}
	if _, err := VotePlan(context.Background(), nil, steps, []bool{true}); err == nil {
		t.Error("VotePlan with mismatched lengths succeeded")
	}
}
