package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestScoreRanking(t *testing.T) {
	for _, tc := range []struct {
		ranked, truth []string
		want          RetrievalMetrics
	}{
		// DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3).
		{[]string{"a", "x", "b", "y"}, []string{"b", "a"}, RetrievalMetrics{1, 1, 1, 1.5 / (1 + 1/math.Log2(3))}},
		{[]string{"x", "y", "b"}, []string{"b"}, RetrievalMetrics{0, 1, 1.0 / 3, 0.5}},
		{[]string{"x", "x", "b"}, []string{"b"}, RetrievalMetrics{0, 1, 0.5, 1 / math.Log2(3)}}, // repeats count once
		{[]string{"x", "y", "z", "b"}, []string{"b"}, RetrievalMetrics{0, 0, 0.25, 0}},
		{nil, []string{"b"}, RetrievalMetrics{}},
		{[]string{"b"}, nil, RetrievalMetrics{}},
	} {
		t.Run(fmt.Sprint(tc.ranked, tc.truth), func(t *testing.T) {
			got := ScoreRanking(tc.ranked, tc.truth)
			if !near(got.Hit1, tc.want.Hit1) || !near(got.Hit3, tc.want.Hit3) || !near(got.MRR, tc.want.MRR) || !near(got.NDCG3, tc.want.NDCG3) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

const goodProgram = `<answer>{"sql": "WHERE brand = 'Sony' AND product_id IN <text_0>", "retrieval_list": [{"type": "text", "field": "title", "query": "noise cancelling headphones"}]}</answer>`

func TestParseHybridProgram(t *testing.T) {
	for _, tc := range []struct {
		name, resp, err string
	}{
		{"ok", goodProgram, ""},
		{"ok, sql only", `<think>x</think><answer>{"sql": "WHERE price < 10", "retrieval_list": []}</answer>`, ""},
		{"ok, image and text", `<answer>{"sql": "WHERE product_id IN <image_0> OR product_id NOT IN <text_0>", "retrieval_list": [{"type": "text", "field": "title", "query": "a"}, {"type": "image", "field": "image_url", "query": "b"}]}</answer>`, ""},
		{"no answer", `{"sql": "WHERE x = 1", "retrieval_list": []}`, "no <answer>"},
		{"not json", `<answer>WHERE x = 1</answer>`, "not JSON"},
		{"array", `<answer>[1]</answer>`, "not a JSON object"},
		{"two values", `<answer>{"sql": "WHERE x = 1", "retrieval_list": []} {}</answer>`, "more than one"},
		{"missing list", `<answer>{"sql": "WHERE x = 1"}</answer>`, "retrieval_list"},
		{"missing sql", `<answer>{"retrieval_list": []}</answer>`, `"sql"`},
		{"extra key", `<answer>{"sql": "WHERE x = 1", "retrieval_list": [], "k": 3}</answer>`, "unknown key"},
		{"no WHERE", `<answer>{"sql": "SELECT * FROM t", "retrieval_list": []}</answer>`, "WHERE"},
		{"WHERE only", `<answer>{"sql": "WHERE", "retrieval_list": []}</answer>`, "WHERE"},
		{"bad type", `<answer>{"sql": "WHERE x IN <text_0>", "retrieval_list": [{"type": "audio", "field": "f", "query": "q"}]}</answer>`, "type"},
		{"empty query", `<answer>{"sql": "WHERE x IN <text_0>", "retrieval_list": [{"type": "text", "field": "f", "query": " "}]}</answer>`, "query is empty"},
		{"dangling placeholder", `<answer>{"sql": "WHERE x IN <text_1>", "retrieval_list": [{"type": "text", "field": "f", "query": "q"}]}</answer>`, "names no text entry"},
		{"unused entry", `<answer>{"sql": "WHERE x = 1", "retrieval_list": [{"type": "text", "field": "f", "query": "q"}]}</answer>`, "not used"},
		{"type mismatch", `<answer>{"sql": "WHERE x IN <image_0>", "retrieval_list": [{"type": "text", "field": "f", "query": "q"}]}</answer>`, "names no image entry"},
		{"sql not a string", `<answer>{"sql": 3, "retrieval_list": []}</answer>`, "bad program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, raw, err := ParseHybridProgram(tc.resp)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tc.err == "" && !json.Valid(raw):
				t.Fatalf("raw program %q is not JSON", raw)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestProRetrievalGated(t *testing.T) {
	p, err := NewProRetrieval(ProRetrievalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tok := func(n int) *int { return &n }
	for _, tc := range []struct {
		name              string
		r                 ProRetrievalRollout
		f, e, q, l, total float64
	}{
		{"bad format earns nothing even with a perfect ranking",
			ProRetrievalRollout{Response: "<answer>nope</answer>", Executed: true, Ranked: []string{"g"}}, 0, 0, 0, 0, 0},
		{"execution failed", ProRetrievalRollout{Response: goodProgram, ExecError: "no such column"}, 1, 0, 0, 0, 0.1},
		{"not executed", ProRetrievalRollout{Response: goodProgram, Ranked: []string{"g"}}, 0, 0, 0, 0, 0}, // no outcome: input error
		{"ran, nothing relevant: no length credit", ProRetrievalRollout{Response: goodProgram, Executed: true, Ranked: []string{"x"}}, 1, 1, 0, 0, 0.3},
		{"gold at rank 2", ProRetrievalRollout{Response: goodProgram, Executed: true, Ranked: []string{"x", "g"}}, 1, 1, 0.5, 1, 0.1 + 0.2 + 0.6*0.5 + 0.1},
		{"gold at rank 1, 768 tokens (budget 512)", ProRetrievalRollout{Response: goodProgram, Executed: true, Ranked: []string{"g"}, ResponseTokens: tok(768)}, 1, 1, 1, 0.5, 0.1 + 0.2 + 0.6 + 0.05},
		{"gold at rank 1, 2000 tokens", ProRetrievalRollout{Response: goodProgram, Executed: true, Ranked: []string{"g"}, ResponseTokens: tok(2000)}, 1, 1, 1, 0, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.GroundTruth = []string{"g"}
			res, err := p.Score(context.Background(), tc.r)
			if tc.name == "not executed" {
				if !errors.Is(err, ErrNoExecution) {
					t.Fatalf("err %v, want ErrNoExecution", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(res.Format, tc.f) || !near(res.Exec, tc.e) || !near(res.Result, tc.q) || !near(res.Length, tc.l) || !near(res.Total, tc.total) {
				t.Errorf("F %v E %v Q %v L %v total %v; want %v %v %v %v %v (%+v)", res.Format, res.Exec, res.Result, res.Length, res.Total, tc.f, tc.e, tc.q, tc.l, tc.total, res)
			}
		})
	}
}

// TestProRetrievalGatingMetamorphic: over random outcomes, failing a layer
// zeroes every later layer, and the total never exceeds the credit of the
// layers passed.
func TestProRetrievalGatingMetamorphic(t *testing.T) {
	p, _ := NewProRetrieval(ProRetrievalConfig{Metric: MetricHit1})
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 500 {
		r := ProRetrievalRollout{GroundTruth: []string{"g"}, Response: goodProgram}
		if rng.IntN(3) == 0 {
			r.Response = strings.Replace(goodProgram, "<text_0>", "<text_9>", 1)
		}
		if rng.IntN(3) == 0 {
			r.ExecError = "boom"
		} else {
			r.Executed = true
			for range rng.IntN(4) {
				r.Ranked = append(r.Ranked, []string{"g", "x", "y"}[rng.IntN(3)])
			}
		}
		n := rng.IntN(1500)
		r.ResponseTokens = &n
		res, err := p.Score(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		bad := res.Format == 0 && (res.Exec != 0 || res.Result != 0 || res.Length != 0 || res.Total != 0) ||
			res.Exec == 0 && (res.Result != 0 || res.Length != 0 || res.Total > 0.1+1e-12) ||
			res.Result == 0 && (res.Length != 0 || res.Total > 0.3+1e-12)
		if bad {
			t.Fatalf("trial %d: later layer credited after a failed one: %+v", trial, res)
		}
	}
}

type fakeExecutor struct{ calls int }

func (f *fakeExecutor) Execute(ctx context.Context, collection string, program json.RawMessage) ([]string, error) {
	f.calls++
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var p HybridProgram
	if err := json.Unmarshal(program, &p); err != nil {
		return nil, err
	}
	if collection != "toys" {
		return nil, fmt.Errorf("unknown collection %q", collection)
	}
	if strings.Contains(p.SQL, "Sony") {
		return []string{"x", "g"}, nil
	}
	return nil, nil
}

func TestProRetrievalExecutor(t *testing.T) {
	fe := &fakeExecutor{}
	p, _ := NewProRetrieval(ProRetrievalConfig{Executor: fe})
	res, err := p.Score(context.Background(), ProRetrievalRollout{Collection: "toys", Response: goodProgram, GroundTruth: []string{"g"}})
	if err != nil || res.Exec != 1 || !near(res.Result, 0.5) || res.Ranked != 2 {
		t.Fatalf("executed: %+v %v, want exec 1 and MRR 0.5", res, err)
	}
	res, err = p.Score(context.Background(), ProRetrievalRollout{Collection: "books", Response: goodProgram, GroundTruth: []string{"g"}})
	if err != nil || res.Exec != 0 || !strings.Contains(res.ExecError, "books") || !near(res.Total, 0.1) {
		t.Fatalf("failing executor: %+v %v, want exec 0 with its error and total 0.1", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Score(ctx, ProRetrievalRollout{Collection: "toys", Response: goodProgram, GroundTruth: []string{"g"}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v, want context.Canceled (not an execution failure)", err)
	}
	// A pre-executed rollout is not run again.
	before := fe.calls
	p.Score(context.Background(), ProRetrievalRollout{Collection: "toys", Response: goodProgram, GroundTruth: []string{"g"}, Executed: true, Ranked: []string{"g"}})
	if fe.calls != before {
		t.Error("pre-executed rollout was executed")
	}
}

func TestLengthScore(t *testing.T) {
	for _, tc := range []struct {
		n, b int
		want float64
	}{{0, 512, 1}, {512, 512, 1}, {640, 512, 0.75}, {1024, 512, 0}, {5000, 512, 0}} {
		if got := LengthScore(tc.n, tc.b); !near(got, tc.want) {
			t.Errorf("LengthScore(%d, %d) = %v, want %v", tc.n, tc.b, got, tc.want)
		}
	}
}
