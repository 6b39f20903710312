package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
)

const eps = 1e-12

// l2 is log2 for the hand computations below.
func l2(x float64) float64 { return math.Log2(x) }

// TestScoreRetrievalHandComputed checks every metric against values
// computed by hand from trec_eval's definitions (see RetrievalScores) on
// the edge cases: no gold, only judged-non-relevant gold, an empty list,
// duplicate ids, k larger and smaller than the list, k = 0, graded
// relevance with the ideal ordering cut at k, and ties (ranks are list
// positions).
func TestScoreRetrievalHandComputed(t *testing.T) {
	bin := func(ids ...string) map[string]float64 {
		m := map[string]float64{}
		for _, id := range ids {
			m[id] = 1
		}
		return m
	}
	for _, c := range []struct {
		name   string
		ranked []string
		rel    map[string]float64
		k      int
		want   RetrievalScores
	}{
		{"no gold", []string{"a", "b"}, nil, 10, RetrievalScores{}},
		{"only judged non-relevant", []string{"a"}, map[string]float64{"a": 0}, 10, RetrievalScores{}},
		{"empty list", nil, bin("a"), 10, RetrievalScores{NRelevant: 1}},
		{"perfect", []string{"a", "b"}, bin("a", "b"), 2, RetrievalScores{Recall: 1, NDCG: 1, Hit: 1, MRR: 1, NRelevant: 2, NRetrievedRelevant: 2}},
		// first relevant at rank 2: DCG = 1/log2(3), IDCG = 1
		{"relevant at rank 2", []string{"x", "a", "y"}, bin("a"), 3, RetrievalScores{Recall: 1, NDCG: 1 / l2(3), Hit: 1, MRR: 0.5, NRelevant: 1, NRetrievedRelevant: 1}},
		// the second x takes no rank: a is at rank 2 and inside k = 2
		{"duplicate ids", []string{"x", "x", "a"}, bin("a"), 2, RetrievalScores{Recall: 1, NDCG: 1 / l2(3), Hit: 1, MRR: 0.5, NRelevant: 1, NRetrievedRelevant: 1}},
		{"duplicate relevant id", []string{"a", "a", "b"}, bin("a", "b"), 3, RetrievalScores{Recall: 1, NDCG: (1 + 1/l2(3)) / (1 + 1/l2(3)), Hit: 1, MRR: 1, NRelevant: 2, NRetrievedRelevant: 2}},
		// k beyond the list: recall 1/2, IDCG over both gold = 1 + 1/log2(3)
		{"k larger than the list", []string{"a"}, bin("a", "b"), 10, RetrievalScores{Recall: 0.5, NDCG: 1 / (1 + 1/l2(3)), Hit: 1, MRR: 1, NRelevant: 2, NRetrievedRelevant: 1}},
		{"relevant beyond k", []string{"x", "y", "a"}, bin("a"), 2, RetrievalScores{NRelevant: 1}},
		{"k = 0", []string{"a"}, bin("a"), 0, RetrievalScores{NRelevant: 1}},
		// graded: DCG = 1/1 + 2/log2(3) + 0, IDCG = 2/1 + 1/log2(3); c is judged 0
		{"graded", []string{"b", "a", "c"}, map[string]float64{"a": 2, "b": 1, "c": 0}, 3, RetrievalScores{Recall: 1, NDCG: (1 + 2/l2(3)) / (2 + 1/l2(3)), Hit: 1, MRR: 1, NRelevant: 2, NRetrievedRelevant: 2}},
		// graded, ideal cut at k = 2: IDCG = 3 + 2/log2(3) (grade 1 of c left out)
		{"graded ideal cut at k", []string{"c"}, map[string]float64{"a": 3, "b": 2, "c": 1}, 2, RetrievalScores{Recall: 1.0 / 3, NDCG: 1 / (3 + 2/l2(3)), Hit: 1, MRR: 1, NRelevant: 3, NRetrievedRelevant: 1}},
		// two documents the retriever scored alike: the list's order decides
		{"tie, relevant second", []string{"a", "b"}, bin("b"), 2, RetrievalScores{Recall: 1, NDCG: 1 / l2(3), Hit: 1, MRR: 0.5, NRelevant: 1, NRetrievedRelevant: 1}},
		{"tie, relevant first", []string{"b", "a"}, bin("b"), 2, RetrievalScores{Recall: 1, NDCG: 1, Hit: 1, MRR: 1, NRelevant: 1, NRetrievedRelevant: 1}},
		{"nothing relevant retrieved", []string{"x", "y"}, bin("a", "b", "c"), 2, RetrievalScores{NRelevant: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ScoreRetrieval(c.ranked, c.rel, c.k)
			g, w := got, c.want
			if math.Abs(g.Recall-w.Recall) > eps || math.Abs(g.NDCG-w.NDCG) > eps || g.Hit != w.Hit || math.Abs(g.MRR-w.MRR) > eps || g.NRelevant != w.NRelevant || g.NRetrievedRelevant != w.NRetrievedRelevant {
				t.Errorf("ScoreRetrieval(%v, %v, k=%d) = %+v, want %+v", c.ranked, c.rel, c.k, got, c.want)
			}
		})
	}
}

// TestScoreRetrievalPytrecEval checks the numbers pytrec_eval's README
// prints for its example (qrel q1: d2 relevant, d1/d3 judged 0; q2: d2,
// d3; run scores as below): ndcg 0.5 and 0.6934264036172708, with the run
// sorted by score the way trec_eval sorts it (no ties here), and the
// recip_rank and recall trec_eval gives for the same input (1/3, 1; 1/2,
// 1).
func TestScoreRetrievalPytrecEval(t *testing.T) {
	qrel := map[string]map[string]float64{"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
	run := map[string]map[string]float64{"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}
	want := map[string]struct{ ndcg, rr, recall float64 }{"q1": {0.5, 1.0 / 3, 1}, "q2": {0.6934264036172708, 0.5, 1}}
	for q, scores := range run {
		var ranked []string
		for id := range scores {
			ranked = append(ranked, id)
		}
		sort.Slice(ranked, func(a, b int) bool { return scores[ranked[a]] > scores[ranked[b]] })
		got := ScoreRetrieval(ranked, qrel[q], len(ranked))
		w := want[q]
		if math.Abs(got.NDCG-w.ndcg) > 1e-15 || math.Abs(got.MRR-w.rr) > eps || got.Recall != w.recall {
			t.Errorf("%s (ranked %v): ndcg %.16f, recip_rank %v, recall %v; pytrec_eval/trec_eval %.16f, %v, %v", q, ranked, got.NDCG, got.MRR, got.Recall, w.ndcg, w.rr, w.recall)
		}
	}
}

// TestScoreRankingUnchanged pins ProRetrieval's metrics, now computed by
// ScoreRetrieval, on the cases its definition names.
func TestScoreRankingUnchanged(t *testing.T) {
	for _, c := range []struct {
		ranked, truth []string
		want          RetrievalMetrics
	}{
		{[]string{"a", "b", "c", "d"}, []string{"d"}, RetrievalMetrics{MRR: 0.25}},
		{[]string{"x", "a", "a", "b"}, []string{"a", "b"}, RetrievalMetrics{Hit3: 1, MRR: 0.5, NDCG3: (1/l2(3) + 1/l2(4)) / (1 + 1/l2(3))}},
		{[]string{"a"}, []string{"a", "b", "c", "e"}, RetrievalMetrics{Hit1: 1, Hit3: 1, MRR: 1, NDCG3: 1 / (1 + 1/l2(3) + 1/l2(4))}},
		{[]string{"a"}, nil, RetrievalMetrics{}},
	} {
		got := ScoreRanking(c.ranked, c.truth)
		if math.Abs(got.NDCG3-c.want.NDCG3) > eps || got.Hit1 != c.want.Hit1 || got.Hit3 != c.want.Hit3 || math.Abs(got.MRR-c.want.MRR) > eps {
			t.Errorf("ScoreRanking(%v, %v) = %+v, want %+v", c.ranked, c.truth, got, c.want)
		}
	}
}

func TestQueriesFromAnswer(t *testing.T) {
	for _, c := range []struct {
		response string
		want     []string
		found    bool
	}{
		{`<think>x</think><answer>{"query": "informant film director"}</answer>`, []string{"informant film director"}, true},
		{`<answer>{"query": ["a b", "c"]}</answer>`, []string{"a b", "c"}, true},
		{`<answer>["q1", "", "q2", 3]</answer>`, []string{"q1", "q2"}, true},
		{`<answer>"quoted query"</answer>`, []string{"quoted query"}, true},
		{`<answer>who directed the informant</answer>`, []string{"who directed the informant"}, true},
		{`<answer>first</answer> then <answer>second</answer>`, []string{"second"}, true},
		{`<answer>{"q": "no query key"}</answer>`, nil, true},
		{`<answer>  </answer>`, nil, true},
		{`<answer>42</answer>`, []string{"42"}, true},
		{`no answer block`, nil, false},
	} {
		got, found := QueriesFromAnswer(c.response)
		if found != c.found || !slices.Equal(got, c.want) {
			t.Errorf("QueriesFromAnswer(%q) = %q, %v; want %q, %v", c.response, got, found, c.want, c.found)
		}
	}
}

// fakeSearcher maps each query to the ids of its words (a query "a b"
// retrieves ["a", "b"]), "bm25" and "e5" retrieving alike, cut at k, and
// records its calls.
type fakeSearcher struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeSearcher) Retrievers() []string { return []string{"bm25", "e5"} }
func (f *fakeSearcher) Default() string      { return "bm25" }
func (f *fakeSearcher) SearchIDs(ctx context.Context, retriever string, queries []string, k int) ([][]string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s k=%d %q", retriever, k, queries))
	f.mu.Unlock()
	out := make([][]string, len(queries))
	for i, q := range queries {
		w := strings.Fields(q)
		out[i] = w[:min(k, len(w))]
	}
	return out, nil
}

func scoreRetrieval(t *testing.T, s *Scorer, rollouts ...string) ([]RetrievalResult, error) {
	t.Helper()
	raws := make([]json.RawMessage, len(rollouts))
	for i, r := range rollouts {
		raws[i] = json.RawMessage(r)
	}
	res, err := s.ScoreBatch(context.Background(), KindRetrieval, raws)
	if err != nil {
		return nil, err
	}
	out := make([]RetrievalResult, len(res))
	for i, r := range res {
		out[i] = r.(RetrievalResult)
	}
	return out, nil
}

// TestRetrievalReward scores rollouts through ScoreBatch with a fake
// searcher: where the queries come from, defaults, the chosen metric,
// fusion of several queries, and one search per (retriever, k) over the
// batch's distinct queries.
func TestRetrievalReward(t *testing.T) {
	f := &fakeSearcher{}
	s, err := New(Config{Retrieval: RetrievalConfig{Searcher: f}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := scoreRetrieval(t, s,
		`{"id": "r1", "response": "<answer>{\"query\": \"g1 x g2\"}</answer>", "gold_ids": ["g1", "g2"]}`,
		`{"id": "r2", "query": "x g1", "gold_ids": ["g1"], "metric": "mrr"}`,
		`{"id": "r3", "response": "<answer>g1 x g2</answer>", "gold_passage_ids": ["g1", "g2"], "k": 1, "metric": "ndcg"}`,
		`{"id": "r4", "response": "I give up", "gold_ids": ["g1"]}`,
		`{"id": "r5", "queries": ["x g1", "g1 y"], "relevance": {"g1": 2, "y": 1, "x": 0}, "metric": "ndcg", "retriever": "e5"}`,
		`{"id": "r6", "query": "x g1", "gold_ids": ["g1"], "metric": "hit", "data_source": "deepretrieval"}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	// r5: RRF of [x g1] and [g1 y]: g1 1/62 + 1/61, x 1/61, y 1/62 → g1, x, y;
	// DCG = 2 + 0 + 1/log2(4), IDCG = 2 + 1/log2(3)
	ndcg5 := (2 + 1/l2(4)) / (2 + 1/l2(3))
	for _, c := range []struct {
		id        string
		reward    float64
		metric    string
		k         int
		retriever string
		queries   []string
		found     bool
		retrieved []string
	}{
		{"r1", 1, "recall", 10, "bm25", []string{"g1 x g2"}, true, []string{"g1", "x", "g2"}},
		{"r2", 0.5, "mrr", 10, "bm25", []string{"x g1"}, true, []string{"x", "g1"}},
		{"r3", 1, "ndcg", 1, "bm25", []string{"g1 x g2"}, true, []string{"g1"}},
		{"r4", 0, "recall", 10, "bm25", []string{}, false, []string{}},
		{"r5", ndcg5, "ndcg", 10, "e5", []string{"x g1", "g1 y"}, true, []string{"g1", "x", "y"}},
		{"r6", 1, "hit", 10, "bm25", []string{"x g1"}, true, []string{"x", "g1"}},
	} {
		i := slices.IndexFunc(res, func(r RetrievalResult) bool { return r.ID == c.id })
		r := res[i]
		if math.Abs(r.Reward-c.reward) > eps || r.Metric != c.metric || r.K != c.k || r.Retriever != c.retriever || !slices.Equal(r.Queries, c.queries) || r.Found != c.found || !slices.Equal(r.Retrieved, c.retrieved) {
			t.Errorf("%s: %+v; want reward %v metric %s k %d retriever %s queries %q found %v retrieved %v", c.id, r, c.reward, c.metric, c.k, c.retriever, c.queries, c.found, c.retrieved)
		}
	}
	slices.Sort(f.calls)
	want := []string{`bm25 k=1 ["g1 x g2"]`, `bm25 k=10 ["g1 x g2" "x g1"]`, `e5 k=10 ["x g1" "g1 y"]`}
	if !slices.Equal(f.calls, want) {
		t.Errorf("searches %q, want one per (retriever, k) with the distinct queries: %q", f.calls, want)
	}
	b, err := json.Marshal(res[0])
	if err != nil || !strings.Contains(string(b), `"reward":1,"metric":"recall","k":10,"retriever":"bm25","queries":["g1 x g2"],"found":true,"recall":1,"ndcg":0.9197207891481877,"hit":1,"mrr":1,"n_relevant":2,"n_retrieved_relevant":2,"retrieved":["g1","x","g2"]`) {
		t.Errorf("JSON %s (%v)", b, err)
	}
}

// TestRetrievalRefusals checks the 400s, each naming its field.
func TestRetrievalRefusals(t *testing.T) {
	s, _ := New(Config{Retrieval: RetrievalConfig{Searcher: &fakeSearcher{}}})
	many := make([]string, MaxRetrievalQueries+1)
	for i := range many {
		many[i] = fmt.Sprint("q", i)
	}
	manyJSON, _ := json.Marshal(many)
	for _, c := range []struct{ rollout, field, want string }{
		{`{"query": "q"}`, "gold_ids", "no gold"},
		{`{"query": "q", "gold_ids": []}`, "gold_ids", "no gold"},
		{`{"query": "q", "gold_ids": ["a"], "k": -1}`, "k", "-1"},
		{`{"query": "q", "gold_ids": ["a"], "k": 1001}`, "k", "1..1000"},
		{`{"query": "q", "gold_ids": ["a"], "metric": "map"}`, "metric", `"map" is not one of recall, ndcg, hit, mrr`},
		{`{"query": "q", "gold_ids": ["a"], "retriever": "splade"}`, "retriever", `"splade" is not served (have bm25, e5)`},
		{`{"query": "q", "relevance": {"a": -1}}`, "relevance", "integer ≥ 0"},
		{`{"query": "q", "relevance": {"a": 1.5}}`, "relevance", "integer ≥ 0"},
		{`{"queries": ` + string(manyJSON) + `, "gold_ids": ["a"]}`, "queries", "at most 16"},
		{`{"gold_ids": ["a"]}`, "response", `missing "response"`},
		{`{"Query": "q", "gold_ids": ["a"]}`, "Query", "did you mean"},
		{`{"query": 3, "gold_ids": ["a"]}`, "query", "string"},
	} {
		_, err := scoreRetrieval(t, s, `{"query": "ok", "gold_ids": ["a"]}`, c.rollout)
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, rlsearch.ErrBadInput) || ie.Index != 1 || !strings.HasPrefix(ie.Path(), "rollouts[1]."+c.field) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an InputError at rollouts[1].%s mentioning %q", c.rollout, err, c.field, c.want)
		}
	}
	none, _ := New(Config{})
	if _, err := scoreRetrieval(t, none, `{"query": "q", "gold_ids": ["a"]}`); !errors.Is(err, ErrNoSearcher) || !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("without a searcher: %v, want ErrNoSearcher (a 400)", err)
	}
}

// FuzzRetrievalRollout scores arbitrary rollout JSON with the fake
// searcher: it is refused with an *InputError (a 400), or scored with
// every metric in [0, 1], recall·R equal to the relevant retrieved count,
// and at most k ids retrieved, each once.
func FuzzRetrievalRollout(f *testing.F) {
	for _, s := range []string{
		`{"response": "<answer>{\"query\": \"g1 x g2\"}</answer>", "gold_ids": ["g1", "g2"]}`,
		`{"queries": ["a b", "b c", "c"], "relevance": {"a": 3, "c": 1, "b": 0}, "k": 2, "metric": "ndcg"}`,
		`{"query": "a a a", "gold_ids": ["a", "a"], "metric": "mrr", "retriever": "e5"}`,
		`{"response": "<answer>[\"x\", 1, null]</answer>", "gold_passage_ids": ["x"], "k": 1000}`,
	} {
		f.Add(s)
	}
	sc, _ := New(Config{Retrieval: RetrievalConfig{Searcher: &fakeSearcher{}}})
	f.Fuzz(func(t *testing.T, rollout string) {
		res, err := sc.ScoreBatch(context.Background(), KindRetrieval, []json.RawMessage{json.RawMessage(rollout)})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, rlsearch.ErrBadInput) {
				t.Fatalf("error %v is not an InputError", err)
			}
			return
		}
		r := res[0].(RetrievalResult)
		for _, v := range []float64{r.Reward, r.Recall, r.NDCG, r.Hit, r.MRR} {
			if !in01(v) {
				t.Fatalf("metric %v outside [0, 1]: %+v", v, r)
			}
		}
		if len(r.Retrieved) > r.K || len(slices.Compact(slices.Sorted(slices.Values(r.Retrieved)))) != len(r.Retrieved) {
			t.Fatalf("retrieved %v: more than k = %d or repeated", r.Retrieved, r.K)
		}
		if r.NRelevant > 0 && math.Abs(r.Recall*float64(r.NRelevant)-float64(r.NRetrievedRelevant)) > 1e-9 {
			t.Fatalf("recall %v × %d relevant ≠ %d retrieved relevant", r.Recall, r.NRelevant, r.NRetrievedRelevant)
		}
	})
}
