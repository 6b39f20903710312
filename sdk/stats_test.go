package sdk

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatsJSON: Stats writes retrieval_calls and, for one release, the
// deprecated calls with the same value; it reads either name.
func TestStatsJSON(t *testing.T) {
	b, err := json.Marshal(Stats{RetrievalCalls: 3, Candidates: 30, PrintedTokens: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"retrieval_calls":3`, `"calls":3`, `"candidates":30`, `"printed_tokens":7`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Stats JSON %s lacks %s", b, want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`{"retrieval_calls": 2, "calls": 2}`, 2},
		{`{"calls": 4}`, 4},
		{`{"retrieval_calls": 5}`, 5},
		{`{"retrieval_calls": 1, "calls": 9}`, 1}, // the new name wins
		{`{}`, 0},
	} {
		var s Stats
		if err := json.Unmarshal([]byte(tc.in), &s); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if s.RetrievalCalls != tc.want {
			t.Errorf("%s → RetrievalCalls %d, want %d", tc.in, s.RetrievalCalls, tc.want)
		}
	}
	var r Result
	if err := json.Unmarshal([]byte(`{"stats": {"calls": "x"}}`), &r); err == nil {
		t.Error(`stats.calls "x" decoded without error`)
	}
}
