package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// resultCounts decodes {"result": [[...], ...]} and returns the length of
// each list.
func resultCounts(t *testing.T, body string) []int {
	t.Helper()
	var got struct {
		Result [][]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode %.300s: %v", body, err)
	}
	n := make([]int, len(got.Result))
	for i, l := range got.Result {
		n[i] = len(l)
	}
	return n
}

// TestSearchR1DefaultTopK: Search-R1's retrieval_server.py replaces a
// falsy topk (absent, null, 0) with its --topk, 3 in every shipped launch
// script; we do the same, so a trainer sending topk 0 gets 3 hits a query.
func TestSearchR1DefaultTopK(t *testing.T) {
	s, _ := newTestServer(t, nil)
	// "capital" matches 4 passages of testCorpus: a cut to 3 is visible.
	for _, tc := range []struct{ name, topk string }{
		{"absent", ``},
		{"null", `,"topk":null`},
		{"zero", `,"topk":0`},
		{"zero float", `,"topk":0.0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["capital","capital paris"]`+tc.topk+`}`)
			if code != 200 {
				t.Fatalf("status %d, body %s", code, body)
			}
			if got := resultCounts(t, body); fmt.Sprint(got) != "[3 3]" {
				t.Errorf("hits per query %v, want [3 3] (Search-R1's default topk)", got)
			}
		})
	}
}

// TestSearchR1BatchOf16384: a large Search-R1 run sends 16,384 queries at
// topk 10 in one request; with the default limits that is a 200 with 10
// hits each. ChunkQueries splits it into 16 Retrieve calls.
func TestSearchR1BatchOf16384(t *testing.T) {
	// Every passage holds "common": each query matches all 50.
	docs := make(fakeDocs, 50)
	for i := range docs {
		docs[i] = rlsearch.Document{ID: fmt.Sprint(i), Contents: rlsearch.MakeContents(fmt.Sprint("T", i), fmt.Sprintf("common word w%d", i%7))}
	}
	r := newTokenRetriever("bm25", docs)
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: docs, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16384
	qs := make([]string, n)
	for i := range qs {
		qs[i] = fmt.Sprintf("common w%d", i%7)
	}
	body, _ := json.Marshal(map[string]any{"queries": qs, "topk": 10, "return_scores": true})
	code, _, out := do(t, s.Handler(), http.MethodPost, "/retrieve", string(body))
	if code != 200 {
		t.Fatalf("16,384 queries x topk 10: status %d, body %.300s", code, out)
	}
	got := resultCounts(t, out)
	if len(got) != n {
		t.Fatalf("%d lists, want %d", len(got), n)
	}
	for i, c := range got {
		if c != 10 {
			t.Fatalf("list %d has %d hits, want 10", i, c)
		}
	}
	if calls, want := r.calls.Load(), int64(n/DefaultChunkQueries); calls != want {
		t.Errorf("%d Retrieve calls, want %d (chunks of %d queries)", calls, want, DefaultChunkQueries)
	}
}

// TestChunkedSearchMatchesOneCall is differential: the same request with
// ChunkQueries 1, 2, 3 and 1,024 gives the same bytes, blank queries
// included at every position of a chunk.
func TestChunkedSearchMatchesOneCall(t *testing.T) {
	queries := []string{" ", "capital", "", "paris", "japan tokyo", "\t", "capital of germany", "europe", "", "asia"}
	body, _ := json.Marshal(map[string]any{"queries": queries, "topk": 2, "return_scores": true})
	var want string
	for _, chunk := range []int{1024, 1, 2, 3} {
		s, bm := newTestServer(t, func(c *Config) { c.ChunkQueries = chunk })
		code, _, out := do(t, s.Handler(), http.MethodPost, "/retrieve", string(body))
		if code != 200 {
			t.Fatalf("chunk %d: status %d, body %s", chunk, code, out)
		}
		if want == "" {
			want = out
		} else if out != want {
			t.Errorf("chunk %d:\n got %s\nwant %s", chunk, out, want)
		}
		if calls, wantCalls := bm.calls.Load(), int64((6+chunk-1)/chunk); calls != wantCalls {
			t.Errorf("chunk %d: %d Retrieve calls for 6 non-blank queries, want %d", chunk, calls, wantCalls)
		}
	}
	if _, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, ChunkQueries: -1}); err == nil || !strings.Contains(err.Error(), "Config.ChunkQueries") {
		t.Errorf("ChunkQueries -1: error %v, want one naming Config.ChunkQueries", err)
	}
}

// TestNonFiniteScore: a NaN or infinite score (a dense model that emitted
// a NaN embedding) is our fault: 500 with the JSON error naming the query
// (its index and text), counted under kind "internal" in /metrics, and
// never a 200 with a truncated or invalid body, also when the bad query is
// in a later chunk.
func TestNonFiniteScore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		queries string
		mention []string
	}{
		{"NaN", `["paris", "nan!"]`, []string{`queries[1] "nan!"`, "NaN", "row 1"}},
		{"+Inf in a later chunk", `["paris", "", "japan", "capital", "inf!"]`, []string{`queries[4] "inf!"`, "+Inf", "row 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestServer(t, func(c *Config) { c.ChunkQueries = 2 })
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":`+tc.queries+`,"return_scores":true}`)
			if code != http.StatusInternalServerError {
				t.Fatalf("status %d, want 500; body %s", code, body)
			}
			msg, _ := errorBody(t, body)
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("error %q does not mention %q", msg, m)
				}
			}
			_, _, metrics := do(t, s.Handler(), http.MethodGet, "/metrics", "")
			if !strings.Contains(metrics, `rlsearch_http_errors_total{kind="internal"} 1`) {
				t.Errorf("/metrics does not count the failure as an internal error:\n%s", grepLines(metrics, "rlsearch_http_errors_total"))
			}
		})
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// failingRetriever answers "all" with every row and fails on "fail!".
type failingRetriever struct{ all []rlsearch.Hit }

func (failingRetriever) Name() string { return "x" }

func (f failingRetriever) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for i, q := range qs {
		if q == "fail!" {
			return nil, errors.New("fake: shard read failed")
		}
		out[i] = f.all[:min(k, len(f.all))]
	}
	return out, nil
}

// TestLateChunkFailure: a retrieval failure in the last chunk, after
// earlier chunks gathered far more than one 64 KiB flush of output, is
// still a clean JSON 500: every chunk is searched before the first byte.
func TestLateChunkFailure(t *testing.T) {
	docs, all := wordDocs(1000)
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"x": failingRetriever{all}}, Docs: docs, Logger: quietLogger(), ChunkQueries: 1})
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["all","all","all","fail!"],"topk":1000}`)
	if code != 500 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d (%s), want a JSON 500; body %.200s", code, hdr.Get("Content-Type"), body)
	}
	if msg, _ := errorBody(t, body); !strings.Contains(msg, "shard read failed") {
		t.Errorf("error %q does not carry the retriever's", msg)
	}
}
