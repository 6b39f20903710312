package server

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// TestSearchR1Quirks pins every body shape Search-R1's /retrieve accepts
// and what it means (retrieval_server.py's QueryRequest and its
// `if not request.topk: request.topk = config.retrieval_topk`, plus what
// Python clients send), and the field and message of each refused shape,
// on parseRetrieve itself: topk absent, null or 0 is the default; an
// integral float (1.0, 1e2) is an integer; null return_scores and
// retriever are absent; unknown keys are ignored (clients send extras),
// but near-misses of known names and other dialects' fields are refused.
func TestSearchR1Quirks(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxQueries = 4; c.MaxResults = 1000 })
	type want struct {
		queries []string
		topK    int
		scores  bool
		name    string
	}
	for _, tc := range []struct {
		body string
		want want
	}{
		{`{"queries": ["a"]}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": []}`, want{[]string{}, defaultTopK, false, "bm25"}},
		{`{"queries": ["", "  ", "b"]}`, want{[]string{"", "  ", "b"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "topk": null}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "topk": 0}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "topk": 0.0}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "topk": -0}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "topk": 1}`, want{[]string{"a"}, 1, false, "bm25"}},
		{`{"queries": ["a"], "topk": 5.0}`, want{[]string{"a"}, 5, false, "bm25"}},
		{`{"queries": ["a"], "topk": 1e2}`, want{[]string{"a"}, 100, false, "bm25"}},
		{`{"queries": ["a"], "topk": 1000}`, want{[]string{"a"}, 1000, false, "bm25"}},
		{`{"queries": ["a"], "return_scores": true}`, want{[]string{"a"}, defaultTopK, true, "bm25"}},
		{`{"queries": ["a"], "return_scores": false}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "return_scores": null}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "retriever": null}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["a"], "retriever": "e5"}`, want{[]string{"a"}, defaultTopK, false, "e5"}},
		{`{"topk": 2, "return_scores": true, "queries": ["x", "y"]}`, want{[]string{"x", "y"}, 2, true, "bm25"}},
		{`{"queries": ["a"], "metadata": {"step": 3}, "request_id": 7, "extra": null}`, want{[]string{"a"}, defaultTopK, false, "bm25"}},
		{`{"queries": ["caf\u00e9 \"q\""]}`, want{[]string{`café "q"`}, defaultTopK, false, "bm25"}},
	} {
		fields, err := jsonbody.Object([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		req, err := s.parseRetrieve(fields)
		if err != nil {
			t.Errorf("%s: %v, want accepted", tc.body, err)
			continue
		}
		got := want{req.queries, req.topK, req.returnScores, req.name}
		if !slices.Equal(got.queries, tc.want.queries) || got.topK != tc.want.topK || got.scores != tc.want.scores || got.name != tc.want.name || req.retriever == nil {
			t.Errorf("%s: got %+v (retriever %v), want %+v", tc.body, got, req.retriever, tc.want)
		}
	}
	for _, tc := range []struct {
		body, field, msg string
		tooLarge         bool
	}{
		{`{}`, "queries", `missing required field "queries" (a list of strings)`, false},
		{`{"queries": null}`, "queries", "queries must be a list of strings, got null", false},
		{`{"queries": "a"}`, "queries", "queries must be a list of strings, got string", false},
		{`{"queries": [1]}`, "queries", "queries[0] must be a string, got number", false},
		{`{"queries": ["a", "b", "c", "d", "e"]}`, "queries", "too many queries: 5 > 4 per request; split the batch", true},
		{`{"queries": ["a"], "topk": "3"}`, "topk", "topk must be an integer, got string", false},
		{`{"queries": ["a"], "topk": 2.5}`, "topk", "topk must be an integer, got 2.5", false},
		{`{"queries": ["a"], "topk": -1}`, "topk", "topk must be between 1 and 1000 (0 or absent means 3), got -1", false},
		{`{"queries": ["a"], "topk": 1e400}`, "topk", "topk must be between 1 and 1000 (0 or absent means 3), got 1e400", false},
		{`{"queries": ["a", "b"], "topk": 501}`, "topk", "too many results: 2 queries x topk 501 = 1002, over the limit of 1000 results per request", true},
		{`{"queries": ["a"], "return_scores": 1}`, "return_scores", "return_scores must be a boolean", false},
		{`{"queries": ["a"], "return_scores": "true"}`, "return_scores", "got string", false},
		{`{"queries": ["a"], "retriever": 5}`, "retriever", "retriever must be a string", false},
		{`{"queries": ["a"], "retriever": "dense"}`, "retriever", `unknown retriever "dense"; available: bm25, e5`, false},
		{`{"queries": ["a"], "top_k": 3}`, "top_k", `unknown field "top_k": did you mean "topk"?`, false},
		{`{"queries": ["a"], "returnScores": true}`, "returnScores", `did you mean "return_scores"?`, false},
		{`{"queries": ["a"], "query": "b"}`, "query", `field "query" belongs to`, false},
		{`{"queries": ["a"], "top_n": 3}`, "top_n", `field "top_n" belongs to`, false},
		{`{"queries": 1, "topk": "x"}`, "queries", "queries must be a list of strings, got number", false},
	} {
		fields, err := jsonbody.Object([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		_, err = s.parseRetrieve(fields)
		var fe *rlsearch.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, rlsearch.ErrTooLarge) != tc.tooLarge {
			t.Errorf("%s: error %v (field %q), want field %q, message containing %q, too large %v", tc.body, err, fieldOf(fe), tc.field, tc.msg, tc.tooLarge)
		}
	}
}

func fieldOf(fe *rlsearch.FieldError) string {
	if fe == nil {
		return "<none>"
	}
	return fe.Field
}
