package reward

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestNumericSignRequest (issue 25, item 5): gold "-5" matched answer "5"
// because SQuAD normalisation drops the minus sign (Search-R1 too). The
// default keeps that for parity; "numeric_sign": "strict" in a request,
// or Config.NumericSign, keeps the sign, for the qa, rpl and search-p1
// rewards; anything else is a 400 naming the field.
func TestNumericSignRequest(t *testing.T) {
	rollout := func(ans, gold string) string {
		return fmt.Sprintf(`{"id": "a", "question": "q", "golden_answers": [%q], "gold_ids": ["d1"], "response": "<answer>%s</answer>"}`, gold, ans)
	}
	for _, tc := range []struct {
		name      string
		cfg       Config
		field     string // the request's numeric_sign ("" = absent)
		ans, gold string
		em        float64 // of qa and rpl
		p1Correct bool
	}{
		{"default is squad: -5 matches 5", Config{}, "", "5", "-5", 1, true},
		{"explicit squad", Config{}, `"squad"`, "5", "-5", 1, true},
		{"strict: -5 does not match 5", Config{}, `"strict"`, "5", "-5", 0, false},
		{"strict: U+2212 minus matches -5", Config{}, `"strict"`, "\u22125", "-5", 1, true},
		{"strict: -5.0 matches -5", Config{}, `"strict"`, "-5.0", "-5", 1, true},
		{"squad: -5.0 is 50, not 5", Config{}, "", "-5.0", "-5", 0, true},
		{"server default strict", Config{NumericSign: NumericSignStrict}, "", "5", "-5", 0, false},
		{"the request overrides the server", Config{NumericSign: NumericSignStrict}, `"squad"`, "5", "-5", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRewardServer(t, tc.cfg, nil)
			opt := ""
			if tc.field != "" {
				opt = `, "numeric_sign": ` + tc.field
			}
			for _, kind := range []Kind{KindQA, KindRPL, KindSearchP1} {
				code, m := post(t, srv.URL+"/v1/rewards/"+string(kind), `{"rollouts": [`+rollout(tc.ans, tc.gold)+`]`+opt+`}`)
				if code != 200 {
					t.Fatalf("%s: status %d %v", kind, code, m)
				}
				r := m["rewards"].([]any)[0].(map[string]any)
				switch kind {
				case KindQA:
					if r["em"] != tc.em {
						t.Errorf("qa em %v, want %v", r["em"], tc.em)
					}
				case KindRPL:
					if qa := r["qa"].(map[string]any); qa["em"] != tc.em {
						t.Errorf("rpl qa.em %v, want %v", qa["em"], tc.em)
					}
				case KindSearchP1:
					if r["correct"] != tc.p1Correct {
						t.Errorf("search-p1 correct %v, want %v", r["correct"], tc.p1Correct)
					}
				}
			}
		})
	}
	srv := newRewardServer(t, Config{}, nil)
	code, m := post(t, srv.URL+"/v1/rewards/qa", `{"rollouts": [`+rollout("5", "-5")+`], "numeric_sign": "exact"}`)
	if code != 400 || m["field"] != "numeric_sign" {
		t.Fatalf("numeric_sign \"exact\": status %d %v, want 400 naming numeric_sign", code, m)
	}
	if _, err := New(Config{NumericSign: "loose"}); err == nil {
		t.Fatal(`Config.NumericSign "loose" accepted`)
	}
	s, _ := New(Config{})
	if _, err := s.ScoreBatchWith(t.Context(), KindQA, nil, ScoreOptions{NumericSign: "x"}); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Fatalf("ScoreBatchWith numeric_sign x: %v, want ErrBadInput", err)
	}
}
