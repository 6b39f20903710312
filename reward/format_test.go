package reward

import (
	"slices"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name  string
		resp  string
		parts FormatParts
	}{
		{"complete", `<reasoning>r</reasoning><tool_call>{"query": "q"}</tool_call><tool_response>o</tool_response><answer>a</answer>`,
			FormatParts{1, 1, 1, 1}},
		// "junk" is 4 of the 22 non-space bytes: structure 0.5 + 0.5·18/22.
		{"stray text", `junk<answer>a</answer>`, FormatParts{1, 0, 0, 0.5 + 0.5*float64(len("<answer>a</answer>"))/float64(len("junk<answer>a</answer>"))}},
		{"two answers", `<reasoning>r</reasoning><answer>a</answer><answer>b</answer>`, FormatParts{0.5, 1, 0, 1}},
		{"answer not last", `<answer>a</answer><reasoning>r</reasoning>`, FormatParts{0.5, 1, 0, 1}},
		{"unclosed reasoning", `<reasoning>r`, FormatParts{0, 1, 0, 0.5}},
		// the unopened close tag unbalances the structure; it is not stray text.
		{"stray close tag", `</tool_call><answer>a</answer>`, FormatParts{1, 0, 0, 0.5}},
		{"one bad tool call of two", `<tool_call>{"query": "q"}</tool_call><tool_call>{bad json</tool_call><answer>a</answer>`, FormatParts{1, 0, 0.5, 1}},
		{"empty", ``, FormatParts{0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := ParseResponse(tc.resp)
			total, p := tr.Format()
			if !near(p.Answer, tc.parts.Answer) || !near(p.Reasoning, tc.parts.Reasoning) || !near(p.ToolCalls, tc.parts.ToolCalls) || !near(p.Structure, tc.parts.Structure) {
				t.Errorf("parts %+v, want %+v", p, tc.parts)
			}
			want := 0.4*tc.parts.Answer + 0.2*tc.parts.Reasoning + 0.2*tc.parts.ToolCalls + 0.2*tc.parts.Structure
			if !near(total, want) {
				t.Errorf("R_format %v, want %v", total, want)
			}
		})
	}
}

func TestParseResponse(t *testing.T) {
	tr := ParseResponse(`<think>
Steps:
1) who directed X
- when was he born
Step 3: where
</think>
<tool_call>{"name":"search","arguments":{"query_list":["a b","c"]}}</tool_call>
<information><answer>quoted</answer> inside an observation</information>
<tool_call>plain query</tool_call>
<answer>final</answer>`)
	if want := []string{"who directed X", "when was he born", "where"}; !slices.Equal(tr.Plan, want) {
		t.Errorf("plan %q, want %q", tr.Plan, want)
	}
	if want := []string{"a b", "c", "plain query"}; !slices.Equal(tr.Actions, want) {
		t.Errorf("actions %q, want %q", tr.Actions, want)
	}
	if a, ok := tr.Answer(); !ok || a != "final" || len(tr.Answers) != 1 {
		t.Errorf("answers %q, want only \"final\" (tags inside an observation are content)", tr.Answers)
	}
	if tr.ToolCalls != 2 || len(tr.Observations) != 1 {
		t.Errorf("tool calls %d observations %d, want 2 and 1", tr.ToolCalls, len(tr.Observations))
	}
	// An explicit <plan> block wins; without list items each line is a step.
	tr = ParseResponse("<plan>find A\n\nfind B</plan><reasoning>1. other</reasoning>")
	if want := []string{"find A", "find B"}; !slices.Equal(tr.Plan, want) {
		t.Errorf("plan %q, want %q", tr.Plan, want)
	}
	// Reasoning without list items has no plan.
	if tr := ParseResponse("<reasoning>just thinking</reasoning>"); tr.Plan != nil {
		t.Errorf("plan %q, want none", tr.Plan)
	}
}

func TestLexicalJudge(t *testing.T) {
	j := LexicalJudge{}
	ctx := t.Context()
	cov, err := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage,
		Steps:   []string{"Find the director of Titanic", "Find where he was born", "Search for the answer"},
		Actions: []string{"Titanic 1997 director", "James Cameron birthplace"}})
	if err != nil {
		t.Fatal(err)
	}
	// Step 1: content {director, titan} both in action 1 -> covered.
	// Step 2: content {where->plan word, he, born} = {born}? "he" is not a Lucene stop word: {he, born}; action 2 has
	// neither "he" nor "born" -> not covered. Step 3: only plan words -> falls back to {answer, search}: not covered.
	if want := []bool{true, false, false}; !slices.Equal(cov.Covered, want) || !near(cov.Score, 1.0/3) {
		t.Errorf("coverage %v score %v, want %v and 1/3", cov.Covered, cov.Score, want)
	}
	plan, _ := j.Judge(ctx, JudgeRequest{Kind: JudgePlan, Steps: []string{"director of Titanic", "Titanic director", "the", "birthplace of the director"}})
	// step 2 duplicates step 1 (same terms), step 3 has no content terms: 2 good of 4.
	if !near(plan.Score, 0.5) {
		t.Errorf("plan score %v, want 0.5", plan.Score)
	}
	rs, _ := j.Judge(ctx, JudgeRequest{Kind: JudgeReasoning, Evidence: "James Cameron was born in Kapuskasing, Ontario", Golds: []string{"Kapuskasing, Canada", "Ontario"}})
	if !near(rs.Score, 1) {
		t.Errorf("reasoning %v, want 1 (gold \"Ontario\" fully present)", rs.Score)
	}
	rs, _ = j.Judge(ctx, JudgeRequest{Kind: JudgeReasoning, Evidence: "James Cameron was born in Kapuskasing", Golds: []string{"Kapuskasing, Canada"}})
	if !near(rs.Score, 0.5) {
		t.Errorf("reasoning %v, want 0.5 (one of two gold terms)", rs.Score)
	}
	// Only actions count: a trajectory text restating the steps covers nothing without a search.
	none, _ := j.Judge(ctx, JudgeRequest{Kind: JudgeCoverage, Steps: []string{"director of Titanic"}, Trajectory: "the director of Titanic"})
	if len(none.Covered) != 1 || none.Covered[0] || none.Score != 0 {
		t.Errorf("coverage without actions %+v, want nothing covered", none)
	}
	if _, err := j.Judge(ctx, JudgeRequest{Kind: "nope"}); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := (LexicalJudge{CoverThreshold: 2}).Judge(ctx, JudgeRequest{Kind: JudgePlan}); err == nil {
		t.Error("threshold 2 accepted")
	}
}
