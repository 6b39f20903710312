package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
)

const testGold = `{"id": "q1", "question": "Who directed The Informant?", "golden_answers": ["Steven Soderbergh"], "gold_passage_ids": ["wiki-1", "wiki-2"], "gold_titles": ["The Informant!", "Steven Soderbergh"]}
{"id": "q2", "question": "Where is Paris?", "golden_answers": ["France"], "gold_passage_ids": ["wiki-9"]}
`

func readTestGold(t *testing.T) *Gold {
	t.Helper()
	g, err := ReadGold(strings.NewReader(testGold), "gold.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func roleLetters(ts []Turn) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.Role[:1])
	}
	return strings.Join(s, "")
}

// The shapes integrations/mutate_rollouts.py reads (its test's rollouts),
// and ours.
func TestParseLineFormats(t *testing.T) {
	info := "\n\n<information>Doc 1(Title: x) y</information>\n\n"
	code := `print(sparse(question, k=3))`
	tests := []struct {
		name, line string
		format     string
		roles      string // p, m, o per turn
		id         string
		answers    []string
		goldIDs    []string
		goldSource string
		printed    []string // printed_ids of the first observation turn
	}{
		{"turns", `{"id": "traj", "question": "Who directed The Informant?", "gold_passage_ids": ["wiki-1"], "turns": [
			{"role": "prompt", "text": "Question: Who directed The Informant?\n"},
			{"role": "model", "text": "<think>t</think><code>\n` + code + `\n</code>"},
			{"role": "observation", "text": "\n<information>\nDoc 1(Title: The Informant!) a\n</information>\n", "printed_ids": ["wiki-1"], "code": "ok", "stats": {"retrieval_calls": 1, "candidates": 3}},
			{"role": "assistant", "text": "<answer>Steven Soderbergh</answer>"}]}`,
			FormatTurns, "pmom", "traj", []string{"Steven Soderbergh"}, []string{"wiki-1"}, "dump + questions file (by question)", []string{"wiki-1"}},
		{"flat", `{"id": "flat", "question": "Where is Paris?", "golden_answers": ["France"], "gold_ids": ["wiki-9"], "prompt": "Question: Where is Paris?\n",
			"response": "<code>` + code + `</code>` + strings.ReplaceAll(info, "\n", `\n`) + `<answer>France</answer>"}`,
			FormatFlat, "pmom", "flat", []string{"France"}, []string{"wiki-9"}, "dump", nil},
		{"messages", `{"id": "msgs", "extra_info": {"question": "Who directed The Informant?", "gold_ids": ["wiki-1", "wiki-2"]},
			"reward_model": {"ground_truth": {"target": ["Steven Soderbergh"]}},
			"messages": [{"role": "user", "content": "Question: Who directed The Informant?"},
				{"role": "assistant", "content": "<think>t</think>", "tool_calls": [{"type": "function", "function": {"name": "retrieval_program", "arguments": "{\"code\": \"` + code + `\"}"}}]},
				{"role": "tool", "content": "Doc 1(Title: x) y\n"},
				{"role": "assistant", "content": [{"type": "text", "text": "<answer>wrong answer</answer>"}]}]}`,
			FormatMessages, "pmom", "msgs", []string{"Steven Soderbergh"}, []string{"wiki-1", "wiki-2"}, "dump + questions file (by question)", nil},
		{"verl", `{"input": "Answer this. Question: Where is Paris?\nAssistant:", "output": "<code>` + code + `</code>` + strings.ReplaceAll(info, "\n", `\n`) + `<answer>France</answer>", "gts": {"target": ["France"]}, "score": 1.0, "step": 3}`,
			FormatVerl, "pmom", "line-7", []string{"France"}, []string{"wiki-9"}, "dump + questions file (by prompt)", nil},
		{"search without program", `{"id": "nocode", "question": "Where is Paris?", "gold_ids": ["wiki-9"], "response": "<search>x</search>` + strings.ReplaceAll(info, "\n", `\n`) + `<answer>y</answer>"}`,
			FormatFlat, "mom", "nocode", []string{"France"}, []string{"wiki-9"}, "dump + questions file (by question)", nil},
		{"rpl reward rollout", `{"id": "q2", "golden_answers": ["France"], "response": "<answer>France</answer>", "turns": [{"id": "a", "observation": "Doc 1(Title: Paris) p\n", "printed_ids": ["wiki-9"], "code": "ok", "stats": {"retrieval_calls": 1, "candidates": 3, "printed_tokens": 9}, "program": "` + code + `"}]}`,
			FormatResults, "mom", "q2", []string{"France"}, []string{"wiki-9"}, "dump + questions file (by id)", []string{"wiki-9"}},
		{"numeric id", `{"index": 12, "question": "Where is Paris?", "response": "<answer>France</answer>"}`,
			FormatFlat, "m", "12", []string{"France"}, []string{"wiki-9"}, "questions file (by question)", nil},
	}
	gold := readTestGold(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseLine([]byte(tc.line), 7, gold)
			if err != nil {
				t.Fatalf("ParseLine: %v", err)
			}
			if r.Format != tc.format || roleLetters(r.Turns) != tc.roles || r.ID != tc.id {
				t.Errorf("format %q, roles %q, id %q; want %q, %q, %q", r.Format, roleLetters(r.Turns), r.ID, tc.format, tc.roles, tc.id)
			}
			if !slices.Equal(r.GoldenAnswers, tc.answers) || !slices.Equal(r.GoldIDs, tc.goldIDs) || r.GoldSource != tc.goldSource {
				t.Errorf("answers %q, gold ids %q from %q; want %q, %q from %q", r.GoldenAnswers, r.GoldIDs, r.GoldSource, tc.answers, tc.goldIDs, tc.goldSource)
			}
			for _, tu := range r.Turns {
				if tu.Role == RoleObservation {
					if !slices.Equal(tu.PrintedIDs, tc.printed) {
						t.Errorf("printed ids %q, want %q", tu.PrintedIDs, tc.printed)
					}
					break
				}
			}
		})
	}
}

// A flat rollout splits into turns whose texts concatenate back to
// prompt + response, as _util.split_turns promises.
func TestSplitTurnsConcatenates(t *testing.T) {
	for _, resp := range []string{"", "a", "<information>x</information>", "a<information>x</information>b<information>y</information>", "<information>unclosed"} {
		var sb strings.Builder
		for _, tu := range SplitTurns(resp, "P") {
			sb.WriteString(tu.Text)
		}
		if got := sb.String(); got != "P"+resp {
			t.Errorf("SplitTurns(%q): turns concatenate to %q", resp, got)
		}
	}
}

func TestParseLineBad(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"not json", `{"id": 1,`, "invalid JSON"},
		{"list", `[1, 2]`, "must be a JSON object, got list"},
		{"null", `null`, "must be a JSON object"},
		{"trailing", `{"response": ""}]]`, "unexpected data after the top-level object"},
		{"invalid utf-8", "{\"response\": \"caf\xe9\"}", "not valid UTF-8"},
		{"deep", `{"x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "nested deeper than"},
		{"no text", `{"id": "a", "question": "q"}`, "needs turns, messages, or a response/output string"},
		{"turns not list", `{"turns": {"role": "model"}}`, "turns must be a list, got object"},
		{"bad role", `{"turns": [{"role": "narrator", "text": "x"}]}`, `turns[0].role "narrator" is not prompt`},
		{"turn without role", `{"turns": [{"role": "model", "text": "x"}, {"text": "y"}]}`, "turns[1] has no role"},
		{"turn text type", `{"turns": [{"role": "model", "text": 5}]}`, "turns[0]: text: want string, got JSON number"},
		{"message role", `{"messages": [{"content": "x"}]}`, "messages[0] needs a role"},
		{"message content", `{"messages": [{"role": "user", "content": 5}]}`, "messages[0].content must be a string or a list"},
		{"response type", `{"response": ["a"]}`, "response must be a string, got list"},
		{"question type", `{"question": 5, "response": ""}`, "question must be a string, got number"},
		{"answers object", `{"response": "", "golden_answers": {"a": 1}}`, "golden_answers must be a string or a list of strings, got object"},
		{"id object", `{"id": {"a": 1}, "response": ""}`, "id must be a string or a number, got object"},
		{"stats type", `{"turns": [{"role": "observation", "text": "x", "stats": {"retrieval_calls": "1"}}]}`, "turns[0].stats"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLine([]byte(tc.line), 3, nil)
			if !errors.Is(err, ErrBadLine) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseLine(%s): %v; want ErrBadLine saying %q", tc.line, err, tc.want)
			}
		})
	}
}

func newTestAnalyzer(t testing.TB, gold *Gold) *Analyzer {
	t.Helper()
	an, err := NewAnalyzer(AnalyzerConfig{Gold: gold})
	if err != nil {
		t.Fatal(err)
	}
	return an
}

// scoreDirect is the reward endpoint's answer for one input (the oracle of
// the analyzer's rewards).
func scoreDirect(t *testing.T, kind reward.Kind, in any) any {
	t.Helper()
	s, err := reward.New(reward.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(in)
	res, err := s.ScoreBatch(context.Background(), kind, []json.RawMessage{b})
	if err != nil {
		t.Fatal(err)
	}
	return res[0]
}

func TestAnalyzeReadsTurnsAndScores(t *testing.T) {
	an := newTestAnalyzer(t, readTestGold(t))
	prog := "docs = sparse(\"informant director\", k=5)\nprint(docs[:2])\n"
	obs := "Doc 1(Title: Steven Soderbergh) An American film director.\nDoc 2(Title: Staff (military)) A staff.\n"
	line, _ := json.Marshal(map[string]any{
		"id": "q1",
		"turns": []map[string]any{
			{"role": "prompt", "text": "Question: Who directed The Informant?"},
			{"role": "model", "text": "<code>\n" + prog + "</code>"},
			{"role": "observation", "text": "\n<information>\n" + obs + "</information>\n", "printed_ids": []string{"wiki-2", "wiki-7"}, "stats": map[string]int{"retrieval_calls": 1, "candidates": 5, "printed_tokens": 20}},
			{"role": "model", "text": "<code>\nprint(sparse(question, k=100))\n</code>"},
			{"role": "observation", "text": "\n<information>\nError (budget_exceeded): line 1: sparse: width k = 100 exceeds the cap of 50\n</information>\n"},
			{"role": "model", "text": "<answer>Soderbergh</answer> <answer>Steven Soderbergh</answer>"},
		},
	})
	r, err := an.Analyze(context.Background(), line, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Turns[1].Typed == nil || r.Turns[1].Typed.Width != 5 || r.Turns[1].Typed.Print != 2 {
		t.Errorf("typed program of turn 1: %+v (%s); want sparse width 5 print 2", r.Turns[1].Typed, r.Turns[1].TypedError)
	}
	if got, want := r.Codes, []string{"ok", "budget_exceeded"}; !slices.Equal(got, want) {
		t.Errorf("codes %q, want %q", got, want)
	}
	if r.Turns[4].OutcomeMessage != "line 1: sparse: width k = 100 exceeds the cap of 50" {
		t.Errorf("outcome message %q", r.Turns[4].OutcomeMessage)
	}
	docs := r.Turns[2].Docs
	if len(docs) != 2 || docs[1].Title != "Staff (military)" || docs[0].ID != "wiki-2" || !docs[0].Gold || docs[1].Gold {
		t.Errorf("observation docs %+v; want Steven Soderbergh (wiki-2, gold) and Staff (military) (wiki-7)", docs)
	}
	// Calls: 1 from the first program's stats, 1 from the second's typed form.
	if r.Calls != 2 || r.AnswerBlocks != 2 || r.Answer != "Steven Soderbergh" {
		t.Errorf("calls %d, answer blocks %d, answer %q; want 2, 2, Steven Soderbergh", r.Calls, r.AnswerBlocks, r.Answer)
	}
	want := []string{PatternRepeatedAnswer, PatternBudget}
	if !slices.Equal(r.Patterns, want) || r.GoldSeen != GoldSome || r.Outcome != AnswerCorrect {
		t.Errorf("patterns %q gold %s answer %s; want %q some correct", r.Patterns, r.GoldSeen, r.Outcome, want)
	}
	// The rewards are the reward package's on the inputs the analyzer kept.
	for kind, in := range r.RewardInputs {
		var v any
		json.Unmarshal(in, &v)
		if got, want := r.Rewards[kind], scoreDirect(t, kind, v); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: analyzer %+v, reward endpoint code %+v", kind, got, want)
		}
	}
	rp := r.Rewards[reward.KindRPL].(reward.RPLResult)
	if rp.GoldCovered != 1 || rp.NGold != 2 || rp.RetrievalCalls != 1 || rp.MatchedBy != "ids" {
		t.Errorf("rpl %+v: want 1 of 2 gold covered by ids, 1 retrieval call (from stats)", rp)
	}
	if r.Turns[2].VRet == nil || *r.Turns[2].VRet != 0 {
		t.Errorf("turn 2 V_ret %v, want 0 (one of two gold)", r.Turns[2].VRet)
	}
	if r.Values["qa.em"] != 1 || r.Values["rpl.coverage"] != 0.5 {
		t.Errorf("values %v", r.Values)
	}
}

// Without printed ids the RPL reward matches gold titles in the
// observation, as /v1/rewards/rpl does.
func TestAnalyzeTitlesOnly(t *testing.T) {
	an := newTestAnalyzer(t, readTestGold(t))
	line := `{"question": "Who directed The Informant?", "prompt": "Q", "response": "<search>informant director</search><information>Doc 1(Title: The Informant!) x\nDoc 2(Title: Steven Soderbergh) y\n</information><answer></answer>"}`
	r, err := an.Analyze(context.Background(), []byte(line), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	rp := r.Rewards[reward.KindRPL].(reward.RPLResult)
	if rp.VRet != 1 || rp.MatchedBy != "titles" || r.GoldSeen != GoldAll {
		t.Errorf("rpl %+v gold seen %s: want v_ret 1 matched by titles", rp, r.GoldSeen)
	}
	if !slices.Equal(r.Patterns, []string{PatternEmptyAnswer}) || r.Calls != 1 || len(r.Codes) != 0 {
		t.Errorf("patterns %q calls %d codes %q: want empty_answer, 1 search, no program", r.Patterns, r.Calls, r.Codes)
	}
	if got := r.Turns[2].Docs; len(got) != 2 || !got[0].Gold || !got[1].Gold {
		t.Errorf("docs %+v: both gold by title", got)
	}
}

func TestAnalyzeProRetrieval(t *testing.T) {
	an := newTestAnalyzer(t, nil)
	line := `{"id": "h1", "response": "<answer>{\"sql\": \"WHERE price < 3 AND product_id IN <text_0>\", \"retrieval_list\": [{\"type\": \"text\", \"field\": \"title\", \"query\": \"train\"}]}</answer>", "ground_truth": ["p2"], "executed": true, "ranked": ["p1", "p2"]}`
	r, err := an.Analyze(context.Background(), []byte(line), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := r.Rewards[reward.KindProRetrieval].(reward.ProRetrievalResult)
	if !ok || pr.Metrics.MRR != 0.5 || len(r.Rewards) != 1 {
		t.Fatalf("rewards %+v: want only proretrieval with MRR 0.5", r.Rewards)
	}
	if r.Values["proretrieval.result"] != 0.5 {
		t.Errorf("values %v", r.Values)
	}
}

func TestAnalyzeCodes(t *testing.T) {
	an := newTestAnalyzer(t, nil)
	for _, tc := range []struct {
		obs, code, pattern string
	}{
		{"Doc 1(Title: a) b\n", "ok", ""},
		{"Error (syntax_error): line 1: got newline\n", "syntax_error", PatternProgramError},
		{"partial\nError (unavailable): line 1: dense retrieval is not available\n", "unavailable", PatternUnavailable},
		{"Error (budget_exceeded): call budget exceeded\n", "budget_exceeded", PatternBudget},
	} {
		line, _ := json.Marshal(map[string]any{"response": "<code>print(1)</code><information>" + tc.obs + "</information><answer>a</answer>"})
		r, err := an.Analyze(context.Background(), line, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Codes, []string{tc.code}) || (tc.pattern != "") != slices.Contains(r.Patterns, tc.pattern) {
			t.Errorf("observation %q: codes %q patterns %q; want [%s] and pattern %q", tc.obs, r.Codes, r.Patterns, tc.code, tc.pattern)
		}
	}
	_ = sdk.CodeOK
}
