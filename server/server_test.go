package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
)

// newTestServer builds a Server over testCorpus with a token retriever as
// "bm25" (the default) and a second one as "e5".
func newTestServer(t testing.TB, mod func(*Config)) (*Server, *tokenRetriever) {
	t.Helper()
	bm := newTokenRetriever("bm25", testCorpus)
	bm.tricks = true
	cfg := Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": bm, "e5": newTokenRetriever("e5", testCorpus)},
		Default:    "bm25",
		Docs:       testCorpus,
		Logger:     quietLogger(),
		Registry:   prometheus.NewRegistry(),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, bm
}

// do sends one request through the handler and returns status, headers
// and body.
func do(t testing.TB, h http.Handler, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.String()
}

func TestRetrieveContractBytes(t *testing.T) {
	fixed := fixedRetriever{
		"q1": {{Row: 2, Score: 1.5}, {Row: 3, Score: 0.3}, {Row: 0, Score: 1e-7}, {Row: 1, Score: 0}},
		"q2": {{Row: 6, Score: -2.25}},
	}
	s, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": fixed},
		Docs:       testCorpus,
		Logger:     quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	doc2 := `{"id":"doc-2","contents":"\"Tokyo\"\nTokyo is the capital of Japan. <b>&</b> café ☕"}`
	doc3 := `{"id":"3","contents":"\"The \"Quote\"\"\nback\\slash\ttab\u0001ctl\u2028sep"}`
	doc0 := `{"id":"0","contents":"\"Paris\"\nParis is the capital of France."}`
	doc6 := `{"id":"6","contents":"\"Berlin\"\nBerlin is the capital of Germany."}`
	tests := []struct {
		name, body, want string
	}{
		{
			name: "scores",
			body: `{"queries":["q1","q2","nothing"],"topk":3,"return_scores":true}`,
			// 0.3 and 1e-7 are float32 widened to float64, as numpy's
			// float32 .tolist() gives them to Search-R1's json.dumps.
			want: `{"result":[[{"document":` + doc2 + `,"score":1.5},{"document":` + doc3 + `,"score":0.30000001192092896},{"document":` + doc0 + `,"score":1.0000000116860974e-7}],[{"document":` + doc6 + `,"score":-2.25}],[]]}`,
		},
		{
			name: "bare documents, default topk 3",
			body: `{"queries":["q1"]}`,
			want: `{"result":[[` + doc2 + `,` + doc3 + `,` + doc0 + `]]}`,
		},
		{
			name: "return_scores false, topk 1, extra fields ignored",
			body: ` {"return_scores": false, "topk": 1, "queries": ["q2", "q1"], "extra": {"x": [1, 2]}} `,
			want: `{"result":[[` + doc6 + `],[` + doc2 + `]]}`,
		},
		{
			name: "zero score kept",
			body: `{"queries":["q1"],"topk":4,"return_scores":true}`,
			want: `{"result":[[{"document":` + doc2 + `,"score":1.5},{"document":` + doc3 + `,"score":0.30000001192092896},{"document":` + doc0 + `,"score":1.0000000116860974e-7},{"document":{"id":"1","contents":"\"France\"\nFrance is a country in Europe; its capital is Paris."},"score":0}]]}`,
		},
		{name: "empty queries", body: `{"queries":[]}`, want: `{"result":[]}`},
		{name: "null topk means default", body: `{"queries":["q2"],"topk":null,"return_scores":null,"retriever":null}`, want: `{"result":[[` + doc6 + `]]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := do(t, s.Handler(), http.MethodPost, "/retrieve", tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d, want 200; body %s", code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if body != tc.want {
				t.Errorf("body differs from Search-R1's shape\n got %s\nwant %s", body, tc.want)
			}
			if !json.Valid([]byte(body)) {
				t.Errorf("body is not valid JSON: %s", body)
			}
		})
	}
}

// TestRetrieveDecodesToCorpus checks the escaping by decoding the answer
// with encoding/json and comparing it with the corpus.
func TestRetrieveDecodesToCorpus(t *testing.T) {
	var fixed fixedRetriever = map[string][]rlsearch.Hit{"all": nil}
	for i := range testCorpus {
		fixed["all"] = append(fixed["all"], rlsearch.Hit{Row: int32(i), Score: float32(len(testCorpus) - i)})
	}
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"x": fixed}, Docs: testCorpus, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["all"],"topk":100,"return_scores":true}`)
	var got struct {
		Result [][]struct {
			Document rlsearch.Document `json:"document"`
			Score    float64           `json:"score"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	if len(got.Result) != 1 || len(got.Result[0]) != len(testCorpus) {
		t.Fatalf("got %d lists / %v, want 1 list of %d", len(got.Result), got.Result, len(testCorpus))
	}
	for i, h := range got.Result[0] {
		if h.Document != testCorpus[i] {
			t.Errorf("document %d = %+v, want %+v", i, h.Document, testCorpus[i])
		}
		if want := float64(len(testCorpus) - i); h.Score != want {
			t.Errorf("score %d = %v, want %v", i, h.Score, want)
		}
	}
}

func TestRetrieveBadInput(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) {
		c.MaxQueries = 4
		c.MaxBodyBytes = 1024
		c.MaxResults = 20
	})
	long := `{"queries":["` + strings.Repeat("a", 2000) + `"]}`
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		field  string
		msg    string // substring of the error message
	}{
		{"invalid JSON", "POST", "/retrieve", `{"queries": [`, 400, "", "invalid JSON"},
		{"not JSON", "POST", "/retrieve", `queries=a`, 400, "", "invalid JSON"},
		{"empty body", "POST", "/retrieve", ``, 400, "", "empty request body"},
		{"array body", "POST", "/retrieve", `["a"]`, 400, "", "JSON object"},
		{"null body", "POST", "/retrieve", `null`, 400, "", "JSON object"},
		{"string body", "POST", "/retrieve", `"queries"`, 400, "", "JSON object"},
		{"trailing data", "POST", "/retrieve", `{"queries":["a"]} {"x":1}`, 400, "", "after the top-level object"},
		{"missing queries", "POST", "/retrieve", `{"query":["a"]}`, 400, "queries", "missing"},
		{"queries wrong case", "POST", "/retrieve", `{"Queries":["a"]}`, 400, "Queries", `did you mean "queries"?`},
		{"topk near miss", "POST", "/retrieve", `{"queries":["a"],"top_k":10}`, 400, "top_k", `unknown field "top_k": did you mean "topk"?`},
		{"too many results", "POST", "/retrieve", `{"queries":["a","b","c"],"topk":7}`, 413, "topk", "3 queries x topk 7 = 21, over the limit of 20"},
		{"invalid UTF-8", "POST", "/retrieve", "{\"queries\":[\"\xff\"]}", 400, "", "not valid UTF-8: byte 0xff at byte offset 13"},
		{"queries null", "POST", "/retrieve", `{"queries":null}`, 400, "queries", "got null"},
		{"queries string", "POST", "/retrieve", `{"queries":"paris"}`, 400, "queries", "list of strings, got string"},
		{"queries object", "POST", "/retrieve", `{"queries":{"a":1}}`, 400, "queries", "got object"},
		{"queries[0] number", "POST", "/retrieve", `{"queries":[1]}`, 400, "queries", "queries[0] must be a string, got number"},
		{"queries[1] null", "POST", "/retrieve", `{"queries":["a",null]}`, 400, "queries", "queries[1] must be a string, got null"},
		{"queries[2] list", "POST", "/retrieve", `{"queries":["a","b",["c"]]}`, 400, "queries", "queries[2] must be a string, got list"},
		{"too many queries", "POST", "/retrieve", `{"queries":["a","b","c","d","e"]}`, 413, "queries", "too many queries: 5 > 4"},
		{"topk string", "POST", "/retrieve", `{"queries":["a"],"topk":"3"}`, 400, "topk", "integer, got string"},
		{"topk fraction", "POST", "/retrieve", `{"queries":["a"],"topk":2.5}`, 400, "topk", "integer, got 2.5"},
		{"topk bool", "POST", "/retrieve", `{"queries":["a"],"topk":true}`, 400, "topk", "integer, got bool"},
		{"topk negative", "POST", "/retrieve", `{"queries":["a"],"topk":-3}`, 400, "topk", "between 1 and 1000 (0 or absent means 3), got -3"},
		{"topk negative zero float", "POST", "/retrieve", `{"queries":["a"],"topk":-0.5}`, 400, "topk", "integer, got -0.5"},
		{"topk over max", "POST", "/retrieve", `{"queries":["a"],"topk":1001}`, 400, "topk", "between 1 and 1000 (0 or absent means 3), got 1001"},
		{"topk huge int", "POST", "/retrieve", `{"queries":["a"],"topk":123456789012345678901234567890}`, 400, "topk", "between 1 and 1000"},
		{"topk huge float", "POST", "/retrieve", `{"queries":["a"],"topk":1e400}`, 400, "topk", "between 1 and 1000"},
		{"return_scores string", "POST", "/retrieve", `{"queries":["a"],"return_scores":"true"}`, 400, "return_scores", "boolean"},
		{"return_scores number", "POST", "/retrieve", `{"queries":["a"],"return_scores":1}`, 400, "return_scores", "got number"},
		{"unknown retriever", "POST", "/retrieve", `{"queries":["a"],"retriever":"dense"}`, 400, "retriever", `unknown retriever "dense"; available: bm25, e5`},
		{"retriever not string", "POST", "/retrieve", `{"queries":["a"],"retriever":["e5"]}`, 400, "retriever", "must be a string"},
		{"body over limit", "POST", "/retrieve", long, 413, "", "exceeds 1024 bytes"},
		{"GET retrieve", "GET", "/retrieve", ``, 405, "", "use POST"},
		{"PUT retrieve", "PUT", "/retrieve", `{"queries":["a"]}`, 405, "", "use POST"},
		{"POST healthz", "POST", "/healthz", `{}`, 405, "", "use GET, HEAD"},
		{"DELETE metrics", "DELETE", "/metrics", ``, 405, "", "use GET, HEAD"},
		{"unknown path", "POST", "/find", `{"queries":["a"]}`, 404, "", "no such endpoint"}, // /search is ReCall's now
		{"retriever bad input", "POST", "/retrieve", `{"queries":["paris","bad!input"]}`, 400, "queries", "bad input"},
		{"retriever failure", "POST", "/retrieve", `{"queries":["fail!"]}`, 500, "", "index corrupted"},
		{"retriever panic", "POST", "/retrieve", `{"queries":["panic!"]}`, 500, "", "recovered panic"},
		{"row outside corpus", "POST", "/retrieve", `{"queries":["row!"]}`, 500, "", "outside the corpus"},
		{"retriever canceled", "POST", "/retrieve", `{"queries":["cancel!"]}`, 499, "", "canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := do(t, s.Handler(), tc.method, tc.path, tc.body)
			if code != tc.status {
				t.Errorf("status %d, want %d; body %s", code, tc.status, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json: clients parse the error body", ct)
			}
			var e struct {
				Error *string `json:"error"`
				Field *string `json:"field"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == nil || e.Field == nil {
				t.Fatalf("body %q is not {\"error\", \"field\"} JSON (err %v)", body, err)
			}
			if *e.Field != tc.field {
				t.Errorf("field %q, want %q (message %q)", *e.Field, tc.field, *e.Error)
			}
			if !strings.Contains(*e.Error, tc.msg) {
				t.Errorf("error %q does not mention %q", *e.Error, tc.msg)
			}
			if code == 405 && hdr.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}
}

// TestBodyLimitWithoutContentLength covers a chunked body, where only
// http.MaxBytesReader can see the size.
func TestBodyLimitWithoutContentLength(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 1024 })
	body := `{"queries":["` + strings.Repeat("a", 4000) + `"]}`
	req := httptest.NewRequest(http.MethodPost, "/retrieve", io.MultiReader(strings.NewReader(body)))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413; body %s", rec.Code, rec.Body)
	}
}

func TestRetrieveClientGone(t *testing.T) {
	s, bm := newTestServer(t, nil)
	bm.block = make(chan struct{}) // never released: only ctx ends it
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/retrieve", strings.NewReader(`{"queries":["paris"]}`))
	rec := httptest.NewRecorder()
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != statusClientClosed {
		t.Fatalf("status %d, want %d; body %s", rec.Code, statusClientClosed, rec.Body)
	}
}

func TestTopKLargerThanCorpus(t *testing.T) {
	s, _ := newTestServer(t, nil)
	// "is" occurs in every passage, "capital" in four.
	for _, q := range []string{"is", "capital", "pad!"} {
		t.Run(q, func(t *testing.T) {
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve",
				`{"queries":["`+q+`"],"topk":1000,"return_scores":true}`)
			if code != 200 {
				t.Fatalf("status %d: %s", code, body)
			}
			var got struct {
				Result [][]struct {
					Document rlsearch.Document `json:"document"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, h := range got.Result[0] {
				if seen[h.Document.ID] {
					t.Errorf("document %q twice: topk beyond the corpus must not repeat or pad", h.Document.ID)
				}
				seen[h.Document.ID] = true
			}
			want := map[string]int{"is": 6, "capital": 4, "pad!": 2}[q] // doc 3 has no "is"
			if len(seen) != want {
				t.Errorf("got %d documents, want every match once (%d): %s", len(seen), want, body)
			}
		})
	}
}

func TestBlankQueries(t *testing.T) {
	s, bm := newTestServer(t, nil)
	code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve",
		`{"queries":["", "   ", "\t\n", "\u3000", "berlin"],"topk":2}`)
	want := `{"result":[[],[],[],[],[{"id":"6","contents":"\"Berlin\"\nBerlin is the capital of Germany."}]]}`
	if code != 200 || body != want {
		t.Fatalf("got %d %s\nwant 200 %s", code, body, want)
	}
	if n := bm.nq.Load(); n != 1 {
		t.Errorf("retriever saw %d queries, want 1: blank queries never reach it", n)
	}
	bm.calls.Store(0)
	code, _, body = do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":[" ", ""]}`)
	if code != 200 || body != `{"result":[[],[]]}` {
		t.Fatalf("all blank: got %d %s", code, body)
	}
	if n := bm.calls.Load(); n != 0 {
		t.Errorf("retriever called %d times for blank queries only, want 0", n)
	}
}

func TestRetrieverChoice(t *testing.T) {
	s, bm := newTestServer(t, nil)
	e5 := s.cfg.Retrievers["e5"].(*tokenRetriever)
	do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["paris"]}`)
	do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["paris"],"retriever":"e5"}`)
	if bm.calls.Load() != 1 || e5.calls.Load() != 1 {
		t.Errorf("calls bm25=%d e5=%d, want 1 and 1", bm.calls.Load(), e5.calls.Load())
	}
}

// requestBodies are varied valid requests for the concurrency tests.
func requestBodies() []string {
	qs := []string{"paris", "capital of france", "japan tokyo", "is", "europe country", "berlin", "", "nothing here", "café"}
	var bodies []string
	for i := range 64 {
		n := 1 + i%4
		var q []string
		for j := range n {
			q = append(q, `"`+qs[(i+j)%len(qs)]+`"`)
		}
		retr := []string{"bm25", "e5"}[i%2]
		bodies = append(bodies, fmt.Sprintf(`{"queries":[%s],"topk":%d,"return_scores":%v,"retriever":"%s"}`,
			strings.Join(q, ","), 1+i%7, i%3 == 0, retr))
	}
	return bodies
}

func TestConcurrentMatchesSerial(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) {
		// The e5 path goes through a batcher, as in production.
		b := NewBatcher(newTokenRetriever("e5", testCorpus), 16, time.Millisecond)
		t.Cleanup(func() { b.(io.Closer).Close() })
		c.Retrievers["e5"] = b
	})
	bodies := requestBodies()
	serial := make([]string, len(bodies))
	for i, b := range bodies {
		code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", b)
		if code != 200 {
			t.Fatalf("request %d: status %d: %s", i, code, body)
		}
		serial[i] = body
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	got := make([]string, len(bodies))
	var wg sync.WaitGroup
	for i, b := range bodies {
		wg.Go(func() {
			resp, err := http.Post(srv.URL+"/retrieve", "application/json", strings.NewReader(b))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			got[i] = string(body)
		})
	}
	wg.Wait()
	for i := range bodies {
		if got[i] != serial[i] {
			t.Errorf("request %d (%s): concurrent answer differs from serial\n got %s\nwant %s", i, bodies[i], got[i], serial[i])
		}
	}
}

func TestHealthz(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) {
		c.Health = func() map[string]any {
			return map[string]any{"backend": "cpu", "status": "ignored", "index": map[string]int{"bm25_terms": 42}}
		}
	})
	code, _, body := do(t, s.Handler(), http.MethodGet, "/healthz", "")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"status": "ok", "default": "bm25", "num_docs": float64(len(testCorpus)), "backend": "cpu",
		"retrievers": []any{"bm25", "e5"}, "prefix_stable": []any{"bm25", "e5"}, "index": map[string]any{"bm25_terms": float64(42)},
		"pages": map[string]any{"state": "not built (built on the first /access or document lookup)"},
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Errorf("healthz\n got %s\nwant %s", gj, wj)
	}
	if code, _, body := do(t, s.Handler(), http.MethodHead, "/healthz", ""); code != 200 || body != "" {
		t.Errorf("HEAD /healthz: %d %q, want 200 and no body", code, body)
	}
}

func TestMetrics(t *testing.T) {
	s, _ := newTestServer(t, nil)
	h := s.Handler()
	do(t, h, http.MethodPost, "/retrieve", `{"queries":["paris","tokyo"]}`)
	do(t, h, http.MethodPost, "/retrieve", `{"queries":["paris"],"retriever":"e5"}`)
	do(t, h, http.MethodPost, "/retrieve", `{"queries":[1]}`)
	do(t, h, http.MethodGet, "/retrieve", ``)
	do(t, h, http.MethodPost, "/retrieve", `{"queries":["fail!"]}`)
	do(t, h, http.MethodGet, "/healthz", ``)
	code, hdr, body := do(t, h, http.MethodGet, "/metrics", "")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the Prometheus text format", ct)
	}
	for _, want := range []string{
		`rlsearch_http_requests_total{code="200",endpoint="/retrieve"} 2`,
		`rlsearch_http_requests_total{code="400",endpoint="/retrieve"} 1`,
		`rlsearch_http_requests_total{code="405",endpoint="/retrieve"} 1`,
		`rlsearch_http_requests_total{code="500",endpoint="/retrieve"} 1`,
		`rlsearch_http_requests_total{code="200",endpoint="/healthz"} 1`,
		`rlsearch_http_request_duration_seconds_count{endpoint="/retrieve"} 5`,
		`rlsearch_retrieve_queries_per_request_bucket{le="2"} 3`,
		`rlsearch_retrieve_queries_per_request_count 3`,
		`rlsearch_http_errors_total{kind="bad_request"} 1`,
		`rlsearch_http_errors_total{kind="method"} 1`,
		`rlsearch_http_errors_total{kind="internal"} 1`,
		`rlsearch_retrieval_duration_seconds_count{retriever="bm25"} 2`,
		`rlsearch_retrieval_duration_seconds_count{retriever="e5"} 1`,
		`rlsearch_retrieval_queries_total{retriever="bm25"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

func TestDefaultRegistryHasRuntimeMetrics(t *testing.T) {
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := do(t, s.Handler(), http.MethodGet, "/metrics", "")
	if !strings.Contains(body, "go_goroutines") {
		t.Errorf("default registry lacks the Go collector")
	}
}

func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	s, _ := newTestServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	})
	do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["paris","tokyo","x"]}`)
	line := strings.TrimSpace(buf.String())
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	for k, want := range map[string]any{"method": "POST", "path": "/retrieve", "status": float64(200), "queries": float64(3)} {
		if rec[k] != want {
			t.Errorf("log %s = %v, want %v (line %s)", k, rec[k], want, line)
		}
	}
	if _, ok := rec["duration_ms"]; !ok {
		t.Errorf("log line lacks duration_ms: %s", line)
	}
}

func TestConfigValidate(t *testing.T) {
	r := fixedRetriever{}
	tests := []struct {
		name string
		cfg  Config
		want string // substring; "" = valid
	}{
		{"valid", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Default: "bm25", Docs: testCorpus}, ""},
		{"single retriever, no default", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: testCorpus}, ""},
		{"no retrievers", Config{Docs: testCorpus}, "Config.Retrievers is empty"},
		{"nil retriever", Config{Retrievers: map[string]rlsearch.Retriever{"e5": nil}, Docs: testCorpus}, `Config.Retrievers["e5"] is nil`},
		{"empty name", Config{Retrievers: map[string]rlsearch.Retriever{"": r}, Docs: testCorpus}, "empty name"},
		{"ambiguous default", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r, "e5": r}, Docs: testCorpus}, "Config.Default is empty"},
		{"unknown default", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Default: "e5", Docs: testCorpus}, `Config.Default "e5"`},
		{"no docs", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}}, "Config.Docs is nil"},
		{"negative topk", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: testCorpus, MaxTopK: -1}, "Config.MaxTopK"},
		{"negative queries", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: testCorpus, MaxQueries: -1}, "Config.MaxQueries"},
		{"negative body", Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: testCorpus, MaxBodyBytes: -1}, "Config.MaxBodyBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quietLogger()
			_, err := New(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New: %v, want success", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestRegistryConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, Registry: reg, Logger: quietLogger()}
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg); err == nil {
		t.Fatal("second New on the same registry succeeded; want a registration error")
	}
}

func TestGracefulShutdown(t *testing.T) {
	s, bm := newTestServer(t, nil)
	bm.block = make(chan struct{})
	bm.enter = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a }) }()
	addr := (<-addrc).String()

	type result struct {
		code int
		body string
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/retrieve", "application/json", strings.NewReader(`{"queries":["berlin"],"topk":1}`))
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		resc <- result{code: resp.StatusCode, body: string(b), err: err}
	}()
	<-bm.enter // the request is inside the retriever
	cancel()
	// Shutdown has begun: new connections are refused while the
	// in-flight request still waits.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting 5 s after cancel")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("ListenAndServe returned %v before the in-flight request finished", err)
	default:
	}
	close(bm.block)
	res := <-resc
	want := `{"result":[[{"id":"6","contents":"\"Berlin\"\nBerlin is the capital of Germany."}]]}`
	if res.err != nil || res.code != 200 || res.body != want {
		t.Fatalf("in-flight request: %d %q %v, want 200 %s", res.code, res.body, res.err, want)
	}
	if err := <-done; err != nil {
		t.Fatalf("ListenAndServe: %v, want nil after a clean shutdown", err)
	}
}

func TestShutdownTimeout(t *testing.T) {
	s, bm := newTestServer(t, func(c *Config) { c.ShutdownTimeout = 50 * time.Millisecond })
	bm.block = make(chan struct{})
	defer close(bm.block)
	if err := shutdownDuringSearch(s, bm); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ListenAndServe: %v, want a shutdown deadline error", err)
	}
}

// shutdownDuringSearch serves s, sends one /retrieve, cancels the serving
// context once bm's Retrieve has been entered, and returns what
// ListenAndServe returned.
func shutdownDuringSearch(s *Server, bm *tokenRetriever) error {
	bm.enter = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a }) }()
	addr := (<-addrc).String()
	go func() {
		resp, err := http.Post("http://"+addr+"/retrieve", "application/json", strings.NewReader(`{"queries":["berlin"]}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-bm.enter
	cancel()
	return <-done
}

// TestShutdownWaitsForHandlers: after the shutdown timeout the server
// closes the connections and still waits (up to the timeout again) for a
// handler that does not watch its context, so that ListenAndServe never
// returns while a search runs (the caller then closes the index).
func TestShutdownWaitsForHandlers(t *testing.T) {
	for _, tc := range []struct {
		slow     time.Duration
		finished bool
	}{{150 * time.Millisecond, true}, {600 * time.Millisecond, false}} {
		s, bm := newTestServer(t, func(c *Config) { c.ShutdownTimeout = 100 * time.Millisecond })
		bm.slow = tc.slow
		err := shutdownDuringSearch(s, bm)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("slow %v: ListenAndServe: %v, want a shutdown deadline error", tc.slow, err)
		}
		if got := bm.left.Load() == 1; got != tc.finished {
			t.Fatalf("slow %v: search returned before ListenAndServe: %v, want %v (err %v)", tc.slow, got, tc.finished, err)
		}
		if !tc.finished && !strings.Contains(err.Error(), "1 request handlers still running") {
			t.Fatalf("slow %v: error %q does not count the running handler", tc.slow, err)
		}
		time.Sleep(tc.slow) // let the handler end before the next case
	}
}

func TestListenError(t *testing.T) {
	s, _ := newTestServer(t, nil)
	if err := s.ListenAndServe(context.Background(), "256.0.0.1:bad", nil); err == nil {
		t.Fatal("ListenAndServe on a bad address succeeded")
	}
}

// TestLargeResponseStreams checks a response larger than the write buffer.
func TestLargeResponseStreams(t *testing.T) {
	var docs fakeDocs
	for i := range 3000 {
		docs = append(docs, rlsearch.Document{ID: itoa(i), Contents: rlsearch.MakeContents("T"+itoa(i), strings.Repeat("word ", 20))})
	}
	tr := newTokenRetriever("bm25", docs)
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": tr}, Docs: docs, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["word","word"],"topk":1000,"return_scores":true}`)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(body) < 2*flushBytes {
		t.Fatalf("body only %d bytes; the test should exceed the buffer", len(body))
	}
	var got struct {
		Result [][]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Result) != 2 || len(got.Result[0]) != 1000 || len(got.Result[1]) != 1000 {
		t.Fatalf("got %d lists, want 2 of 1000", len(got.Result))
	}
}

// failDocs fails on one row.
type failDocs struct {
	fakeDocs
	bad int32
}

func (f failDocs) Doc(row int32) (rlsearch.Document, error) {
	if row == f.bad {
		return rlsearch.Document{}, errors.New("fake: block checksum mismatch")
	}
	return f.fakeDocs.Doc(row)
}

// wordDocs is n documents of 40 words each (IDs "0" to n-1) and a hit of
// score 1 on every one of them, in row order.
func wordDocs(n int) (fakeDocs, []rlsearch.Hit) {
	var docs fakeDocs
	for i := range n {
		docs = append(docs, rlsearch.Document{ID: itoa(i), Contents: rlsearch.MakeContents("T", strings.Repeat("word ", 40))})
	}
	all := make([]rlsearch.Hit, len(docs))
	for i := range all {
		all[i] = rlsearch.Hit{Row: int32(i), Score: 1}
	}
	return docs, all
}

func TestDocLookupFailure(t *testing.T) {
	docs, all := wordDocs(2000)
	s, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"x": fixedRetriever{"all": all}},
		Docs:       failDocs{docs, 1500},
		Logger:     quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Early failure: nothing written yet, so a JSON 500.
	code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["all"],"topk":1000}`)
	if code != 200 {
		t.Fatalf("rows 0..999 are fine, got %d %s", code, body)
	}
	s.cfg.Docs = failDocs{docs, 3}
	code, _, body = do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["all"],"topk":10}`)
	if code != 500 || !strings.Contains(body, "checksum") {
		t.Fatalf("early failure: %d %s, want a JSON 500", code, body)
	}
	// Late failure: the 200 is already out (> 64 KiB streamed), so the
	// connection is aborted and the client cannot mistake it for success.
	s.cfg.Docs = failDocs{docs, 900}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/retrieve", "application/json", strings.NewReader(`{"queries":["all"],"topk":1000,"return_scores":true}`))
	if err != nil {
		return // aborted before the headers arrived: also not a success
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("late document failure gave a complete response: %d, %d bytes", resp.StatusCode, len(b))
	}
	if len(b) < flushBytes {
		t.Errorf("only %d bytes before the abort; the test should fail after the first flush", len(b))
	}
}
