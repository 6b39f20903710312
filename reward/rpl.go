package reward

import (
	"encoding/json"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// RPLTurn is one program turn of an RPL rollout, as the program runtime
// reports it: the printed evidence (document ids, in print order) and
// optionally the observation text the policy saw.
//
// In JSON a turn may be a result of POST /v1/programs/execute (sdk.Result)
// as it is: {"id", "observation", "printed_ids", "code", "error", "stats":
// {"retrieval_calls", "candidates", "printed_tokens", ...}}. The counts in
// "stats" (also the deprecated "calls") fill retrieval_calls, candidates
// and printed_tokens when the turn does not give them at its top level;
// "id", "code" and "error" are ignored.
type RPLTurn struct {
	Program        string   `json:"program,omitempty"`
	PrintedIDs     []string `json:"printed_ids,omitempty"`
	Observation    string   `json:"observation,omitempty"`
	RetrievalCalls int      `json:"retrieval_calls"` // dense/sparse calls the program made
	Candidates     int      `json:"candidates"`      // documents retrieved before printing
	// PrintedTokens, when set, is the observation's token count as the
	// policy's tokenizer saw it; otherwise it is counted (RPLConfig.Tokens,
	// else rlsearch.BoundTokens, the program runtime's default counter).
	PrintedTokens *int `json:"printed_tokens,omitempty"`
}

// rplTurnJSON is RPLTurn without its methods.
type rplTurnJSON RPLTurn

// UnmarshalJSON reads a turn, or a program result of /v1/programs/execute
// (see RPLTurn).
func (t *RPLTurn) UnmarshalJSON(b []byte) error {
	// Two passes, so that a type error names the field without the name
	// of an embedded helper type.
	var plain rplTurnJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	var v struct {
		RetrievalCalls *int `json:"retrieval_calls"`
		Candidates     *int `json:"candidates"`
		Stats          *struct {
			RetrievalCalls *int `json:"retrieval_calls"`
			Calls          *int `json:"calls"` // the name before 2026-12-01
			Candidates     *int `json:"candidates"`
			PrintedTokens  *int `json:"printed_tokens"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = RPLTurn(plain)
	first := func(ps ...*int) int {
		for _, p := range ps {
			if p != nil {
				return *p
			}
		}
		return 0
	}
	if st := v.Stats; st != nil {
		t.RetrievalCalls = first(v.RetrievalCalls, st.RetrievalCalls, st.Calls)
		t.Candidates = first(v.Candidates, st.Candidates)
		if t.PrintedTokens == nil {
			t.PrintedTokens = st.PrintedTokens
		}
	} else {
		t.RetrievalCalls, t.Candidates = first(v.RetrievalCalls), first(v.Candidates)
	}
	return nil
}

// RPLRollout is one RPL rollout. Gold support is GoldIDs (alias
// "gold_passage_ids", as in the question files) and/or GoldTitles; it is
// used only here, by the verifier, never shown to the program.
type RPLRollout struct {
	ID             string    `json:"id"`
	GoldenAnswers  []string  `json:"golden_answers"`
	GoldIDs        []string  `json:"gold_ids,omitempty"`
	GoldPassageIDs []string  `json:"gold_passage_ids,omitempty"`
	GoldTitles     []string  `json:"gold_titles,omitempty"`
	Response       string    `json:"response,omitempty"`
	Answer         *string   `json:"answer,omitempty"` // overrides extraction from Response
	Turns          []RPLTurn `json:"turns"`
}

// RPLResult is every component of an RPL rollout's score.
type RPLResult struct {
	ID string   `json:"id"`
	QA QAScores `json:"qa"`
	// VRet is V_ret (paper 000, D_mut): 1 when the printed evidence of all
	// turns together covers every gold support document, else 0 (also 0
	// without gold support).
	VRet int `json:"v_ret"`
	// VRetTurns is V_ret of each turn's printed evidence alone (the
	// verifier's test of one executed program).
	VRetTurns   []int   `json:"v_ret_turns"`
	Coverage    float64 `json:"coverage"` // covered gold / gold; 0 without gold
	GoldCovered int     `json:"gold_covered"`
	NGold       int     `json:"n_gold"`
	// MatchedBy is "ids" when evidence was matched by document id only,
	// "titles" when some turn without printed ids was matched by gold title
	// in its observation text, or the gold has titles only (weaker), "" without gold.
	MatchedBy string `json:"matched_by"`

	Turns          int `json:"turns"`
	RetrievalCalls int `json:"retrieval_calls"`
	Candidates     int `json:"candidates"`
	PrintedDocs    int `json:"printed_docs"` // distinct printed ids over all turns
	PrintedTokens  int `json:"printed_tokens"`
}

// RPLConfig configures RPL scoring. The zero value is ready to use.
type RPLConfig struct {
	// Tokens counts observation tokens when a turn does not give
	// PrintedTokens; nil = rlsearch.BoundTokens, the default counter of
	// the program runtime (sdk.Config.Tokens), so that a turn counts the
	// same here as in the runtime's printed_tokens.
	Tokens rlsearch.TokenCounter
	// NumericSign of the answer metrics; "" = NumericSignSQuAD.
	NumericSign NumericSign
}

// gold is the verifier's view of a rollout's gold support: parallel ids
// and titles (either may be empty strings when only the other is known).
type gold struct{ ids, titles []string }

func rplGold(r *RPLRollout) gold {
	ids := r.GoldIDs
	if len(ids) == 0 {
		ids = r.GoldPassageIDs
	}
	n := max(len(ids), len(r.GoldTitles))
	g := gold{ids: make([]string, n), titles: make([]string, n)}
	copy(g.ids, ids)
	// Titles pair with ids only when the lists are parallel; otherwise
	// titles are used alone when there are no ids.
	if len(ids) == 0 || len(ids) == len(r.GoldTitles) {
		copy(g.titles, r.GoldTitles)
	} else {
		g = gold{ids: ids, titles: make([]string, len(ids))}
	}
	return g
}

// covered marks which gold entries a turn's evidence covers: by id, or,
// when the turn printed no ids, by the gold title appearing (after
// Normalize) in its observation text.
func (g gold) covered(t *RPLTurn, into []bool) (byTitle bool) {
	if len(t.PrintedIDs) > 0 {
		set := make(map[string]bool, len(t.PrintedIDs))
		for _, id := range t.PrintedIDs {
			set[id] = true
		}
		for i, id := range g.ids {
			if id != "" && set[id] {
				into[i] = true
			}
		}
		return false
	}
	if t.Observation == "" {
		return false
	}
	obs := " " + Normalize(t.Observation) + " "
	for i, title := range g.titles {
		if nt := Normalize(title); nt != "" && strings.Contains(obs, " "+nt+" ") {
			into[i] = true
			byTitle = true
		}
	}
	return byTitle
}

// ScoreRPL scores one RPL rollout. It does not fail: missing parts score
// zero.
func ScoreRPL(cfg RPLConfig, r RPLRollout) RPLResult {
	res := RPLResult{ID: r.ID, Turns: len(r.Turns), VRetTurns: make([]int, len(r.Turns))}
	if r.Answer != nil {
		res.QA = ScoreQAWith(*r.Answer, true, r.GoldenAnswers, cfg.NumericSign)
	} else {
		a, ok := ExtractAnswer(r.Response)
		res.QA = ScoreQAWith(a, ok, r.GoldenAnswers, cfg.NumericSign)
	}
	g := rplGold(&r)
	res.NGold = len(g.ids)
	all := make([]bool, res.NGold)
	turn := make([]bool, res.NGold)
	printed := map[string]bool{}
	byTitle := false
	for i := range r.Turns {
		t := &r.Turns[i]
		res.RetrievalCalls += max(t.RetrievalCalls, 0)
		res.Candidates += max(t.Candidates, 0)
		for _, id := range t.PrintedIDs {
			printed[id] = true
		}
		switch {
		case t.PrintedTokens != nil:
			res.PrintedTokens += max(*t.PrintedTokens, 0)
		case cfg.Tokens != nil:
			res.PrintedTokens += cfg.Tokens.CountTokens(t.Observation)
		default:
			res.PrintedTokens += rlsearch.BoundTokens{}.CountTokens(t.Observation)
		}
		clear(turn)
		if g.covered(t, turn) {
			byTitle = true
		}
		if res.NGold > 0 && countTrue(turn) == res.NGold {
			res.VRetTurns[i] = 1
		}
		for k, c := range turn {
			all[k] = all[k] || c
		}
	}
	res.PrintedDocs = len(printed)
	if res.NGold > 0 {
		res.GoldCovered = countTrue(all)
		res.Coverage = float64(res.GoldCovered) / float64(res.NGold)
		if res.GoldCovered == res.NGold {
			res.VRet = 1
		}
		res.MatchedBy = "ids"
		if byTitle || !hasText(g.ids) {
			res.MatchedBy = "titles"
		}
	}
	return res
}
