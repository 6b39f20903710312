package reward

import (
	"slices"
	"testing"
)

type wordCounter struct{}

func (wordCounter) CountTokens(s string) int { return len(s) } // bytes, to tell it from the default

func TestScoreRPL(t *testing.T) {
	seven := 7
	for _, tc := range []struct {
		name     string
		r        RPLRollout
		cfg      RPLConfig
		vret     int
		turns    []int
		coverage float64
		matched  string
		tokens   int
		docs     int
	}{
		{"two turns cover the gold together", RPLRollout{GoldIDs: []string{"g1", "g2"}, Turns: []RPLTurn{
			{PrintedIDs: []string{"g1", "x"}, Observation: "a b c", RetrievalCalls: 2, Candidates: 40},
			{PrintedIDs: []string{"g2", "x"}, Observation: "d e", RetrievalCalls: 1, Candidates: 10, PrintedTokens: &seven}}},
			RPLConfig{}, 1, []int{0, 0}, 1, "ids", 2 + 7, 3}, // default counter rlsearch.BoundTokens: "a b c" is 5 letter/space bytes, ⌈5/4⌉ = 2
		{"one turn covers all", RPLRollout{GoldPassageIDs: []string{"g1", "g2"}, Turns: []RPLTurn{
			{PrintedIDs: []string{"g2", "g1"}, Observation: "abc"}}}, RPLConfig{Tokens: wordCounter{}}, 1, []int{1}, 1, "ids", 3, 2},
		{"half covered", RPLRollout{GoldIDs: []string{"g1", "g2"}, Turns: []RPLTurn{{PrintedIDs: []string{"g1"}}}},
			RPLConfig{}, 0, []int{0}, 0.5, "ids", 0, 1},
		{"observation only: titles", RPLRollout{GoldIDs: []string{"g1", "g2"}, GoldTitles: []string{"The Informant!", "Mark Whitacre"}, Turns: []RPLTurn{
			{Observation: "\"The Informant!\"\nA 2009 film. \"Mark Whitacre\"\nAn executive."}}},
			RPLConfig{}, 1, []int{1}, 1, "titles", 23, 0}, // BoundTokens (whitespace words would be 9)
		{"title must be whole words", RPLRollout{GoldTitles: []string{"Mark"}, Turns: []RPLTurn{{Observation: "Marketing"}}},
			RPLConfig{}, 0, []int{0}, 0, "titles", 3, 0}, // BoundTokens: ⌈9/4⌉
		{"no gold support", RPLRollout{GoldenAnswers: []string{"x"}, Turns: []RPLTurn{{PrintedIDs: []string{"a"}}}},
			RPLConfig{}, 0, []int{0}, 0, "", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ScoreRPL(tc.cfg, tc.r)
			if res.VRet != tc.vret || !slices.Equal(res.VRetTurns, tc.turns) || !near(res.Coverage, tc.coverage) ||
				res.MatchedBy != tc.matched || res.PrintedTokens != tc.tokens || res.PrintedDocs != tc.docs {
				t.Errorf("v_ret %d turns %v coverage %v matched %q tokens %d docs %d; want %d %v %v %q %d %d",
					res.VRet, res.VRetTurns, res.Coverage, res.MatchedBy, res.PrintedTokens, res.PrintedDocs,
					tc.vret, tc.turns, tc.coverage, tc.matched, tc.tokens, tc.docs)
			}
		})
	}
	ans := "the Informant"
	res := ScoreRPL(RPLConfig{}, RPLRollout{GoldenAnswers: []string{"Informant"}, Response: "<answer>no</answer>", Answer: &ans,
		Turns: []RPLTurn{{RetrievalCalls: 2, Candidates: 20}, {RetrievalCalls: 1, Candidates: 5}}})
	if res.QA.EM != 1 || res.Turns != 2 || res.RetrievalCalls != 3 || res.Candidates != 25 {
		t.Errorf("answer override and counts: %+v", res)
	}
}
