package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestRepeatedQueriesSearchedOnce: the repeated queries of a /retrieve
// request (rollout samples of one prompt) reach the retriever once each,
// whatever the retriever, and every position still gets its own list.
func TestRepeatedQueriesSearchedOnce(t *testing.T) {
	s, bm := newTestServer(t, nil)
	body := `{"queries": ["capital of france", "tokyo", "capital of france", "  ", "tokyo", "capital of france"], "topk": 2}`
	code, _, out := do(t, s.Handler(), http.MethodPost, "/retrieve", body)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, out)
	}
	if n := bm.nq.Load(); n != 2 {
		t.Errorf("retriever saw %d queries, want the 2 distinct non-blank ones", n)
	}
	var resp struct {
		Result [][]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Result) != 6 {
		t.Fatalf("response %s: %v", out, err)
	}
	same := func(a, b []json.RawMessage) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if string(a[i]) != string(b[i]) {
				return false
			}
		}
		return true
	}
	if len(resp.Result[0]) == 0 || !same(resp.Result[0], resp.Result[2]) || !same(resp.Result[0], resp.Result[5]) || !same(resp.Result[1], resp.Result[4]) || len(resp.Result[3]) != 0 {
		t.Errorf("lists of repeated queries differ or blank got hits: %s", out)
	}
}
