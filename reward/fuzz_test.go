package reward

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func in01(x float64) bool { return x >= 0 && x <= 1 && !math.IsNaN(x) }

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"The Beaver and Erie Canal", "a-an the", "«the» x", "İstanbul", "\xff\xfe", "an_a"} {
		f.Add(s, "the canal")
	}
	f.Fuzz(func(t *testing.T, pred, gold string) {
		n := Normalize(pred)
		if strings.Contains(n, "  ") || strings.TrimSpace(n) != n {
			t.Fatalf("Normalize(%q) = %q has loose whitespace", pred, n)
		}
		if f1 := F1(pred, []string{gold}); !in01(f1) {
			t.Fatalf("F1 = %v", f1)
		}
		if ExactMatch(pred, []string{gold}) && !Contains(pred, []string{gold}) {
			t.Fatalf("exact match without containment: %q %q", pred, gold)
		}
		if ExactMatch(pred, []string{gold}) && F1(pred, []string{gold}) != 1 {
			t.Fatalf("exact match with F1 %v: %q %q", F1(pred, []string{gold}), pred, gold)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add(informantResponse("2009"))
	f.Add("<reasoning>1. a\n2. b</reasoning><tool_call>{\"query\": [\"x\"]}</tool_call><answer>y</answer>")
	f.Add("</answer><answer><tool_call>{\"arguments\": {\"query\": 3}}</tool_call>")
	f.Add("<plan>\n</plan><THINK>x</think>")
	f.Fuzz(func(t *testing.T, resp string) {
		tr := ParseResponse(resp)
		total, p := tr.Format()
		if !in01(total) || !in01(p.Answer) || !in01(p.Reasoning) || !in01(p.ToolCalls) || !in01(p.Structure) {
			t.Fatalf("format %v %+v outside [0,1]", total, p)
		}
		if tr.BadToolCalls > tr.ToolCalls || tr.Stray > tr.Total {
			t.Fatalf("inconsistent counts %+v", tr)
		}
		s, _ := NewSearchP1(SearchP1Config{})
		r, err := s.Score(context.Background(), SearchP1Rollout{ID: "x", GoldenAnswers: []string{"y"}, Response: resp, ReferencePlan: []string{"a b"}})
		if err != nil || r.Error != "" || !in01(r.Path) || !in01(r.Outcome) || !in01(r.SSelf) || !in01(r.SRef) || r.Total < 0 || r.Total > 1+1e-9 {
			t.Fatalf("score %+v %v", r, err)
		}
	})
}

func FuzzParseHybridProgram(f *testing.F) {
	f.Add(goodProgram)
	f.Add(`<answer>{"sql": "WHERE x IN <text_0> AND y IN <image_0>", "retrieval_list": [{"type": "image", "field": "f", "query": "q"}, {"type": "text", "field": "f", "query": "q"}]}</answer>`)
	f.Add(`<answer>{"sql": "WHERE x IN <text_99999999999999999999>", "retrieval_list": []}</answer>`)
	f.Add(`<answer>{"sql": null, "retrieval_list": null}</answer>`)
	f.Fuzz(func(t *testing.T, resp string) {
		p, raw, err := ParseHybridProgram(resp)
		if err != nil {
			return
		}
		if !json.Valid(raw) || !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(p.SQL)), "WHERE") {
			t.Fatalf("accepted program %q (raw %q)", p.SQL, raw)
		}
		pr, _ := NewProRetrieval(ProRetrievalConfig{})
		res, err := pr.Score(context.Background(), ProRetrievalRollout{Response: resp, GroundTruth: []string{"g"}, Executed: true, Ranked: []string{"g"}})
		if err != nil || res.Format != 1 || res.Total < 0.9-1e-9 {
			t.Fatalf("parsed program scored %+v %v", res, err)
		}
	})
}

func FuzzReadReferences(f *testing.F) {
	f.Add("{\"qid\": \"q\", \"plan\": [\"a\", \"b\"]}\n\n{\"qid\": \"r\", \"plan\": [\"c\"]}\n")
	f.Add("{\"qid\": \"q\", \"plan\": [\"a\"]}\n{\"qid\": \"q\", \"plan\": [\"a\"]}\n")
	f.Add("{\"qid\": \"\", \"plan\": []}")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadReferences(strings.NewReader(s))
		if err != nil {
			if !errors.Is(err, ErrBadReferences) {
				t.Fatalf("error %v does not wrap ErrBadReferences", err)
			}
			return
		}
		for k, v := range m {
			if k == "" || len(v) == 0 {
				t.Fatalf("accepted empty qid or plan: %q %q", k, v)
			}
		}
	})
}

func FuzzParseJudgement(f *testing.F) {
	f.Add("coverage", 2, "```json\n{\"covered\": [true, false]}\n```")
	f.Add("plan", 1, `{"score": 0.5}`)
	f.Add("reasoning", 0, `{"score": NaN}`)
	f.Add("plan", 0, `{"score": 1e999}`)
	f.Fuzz(func(t *testing.T, kind string, steps int, content string) {
		req := JudgeRequest{Kind: JudgeKind(kind), Steps: make([]string, max(0, min(steps, 64)))}
		j, err := ParseJudgement(req, content)
		if err != nil {
			if !errors.Is(err, ErrJudge) {
				t.Fatalf("error %v does not wrap ErrJudge", err)
			}
			return
		}
		if !in01(j.Score) || req.Kind == JudgeCoverage && len(j.Covered) != len(req.Steps) {
			t.Fatalf("judgement %+v for %d steps", j, len(req.Steps))
		}
	})
}

// FuzzScoreBatch feeds arbitrary rollout JSON to every kind: the scorer
// returns results or an input error wrapping rlsearch.ErrBadInput, never
// panics.
func FuzzScoreBatch(f *testing.F) {
	f.Add(`{"id": "a", "golden_answers": ["2009"], "response": "<answer>2009</answer>"}`)
	f.Add(`{"gold_ids": ["g"], "turns": [{"printed_ids": ["g"], "printed_tokens": -5, "candidates": -1}]}`)
	f.Add(`{"ground_truth": ["g"], "executed": true, "ranked": ["g", "g"], "response": "<answer>{}</answer>", "response_tokens": -1}`)
	f.Add(`{"golden_answers": [""], "plan": ["a"], "reference_plan": [""]}`)
	f.Add(`null`)
	s, _ := New(Config{Workers: 1})
	f.Fuzz(func(t *testing.T, rollout string) {
		if !json.Valid([]byte(rollout)) {
			return
		}
		for _, k := range Kinds {
			res, err := s.ScoreBatch(context.Background(), k, []json.RawMessage{json.RawMessage(rollout)})
			if err != nil {
				if !errors.Is(err, rlsearch.ErrBadInput) {
					t.Fatalf("%s: error %v is not an input error", k, err)
				}
				continue
			}
			if len(res) != 1 || res[0] == nil {
				t.Fatalf("%s: %d results", k, len(res))
			}
			if _, err := json.Marshal(res); err != nil {
				t.Fatalf("%s: result does not encode: %v", k, err)
			}
		}
	})
}
