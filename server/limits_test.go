package server

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

// errorBody decodes {"error", "field"} and fails the test when the body has
// another shape: clients parse it.
func errorBody(t *testing.T, body string) (msg, field string) {
	t.Helper()
	var e struct {
		Error *string `json:"error"`
		Field *string `json:"field"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == nil || e.Field == nil {
		t.Fatalf("body %q is not {\"error\", \"field\"} JSON (err %v)", body, err)
	}
	return *e.Error, *e.Field
}

// queriesBody returns {"queries": [q × n], "topk": k, "return_scores": true}.
func queriesBody(q string, n, k int) string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = q
	}
	b, _ := json.Marshal(map[string]any{"queries": qs, "topk": k, "return_scores": true})
	return string(b)
}

// TestMaxResultsDefault replays the amplification report: a 50 KB body of
// 4096 queries × topk 1000 asked for 4,096,000 hits (2.9 GB of JSON on
// wiki-18). The default limit of 327,680 hits per request (32,768 queries
// at topk 10) answers 413 naming topk, and the product at the limit still
// passes.
func TestMaxResultsDefault(t *testing.T) {
	s, _ := newTestServer(t, nil)
	tests := []struct {
		name    string
		n, k    int
		status  int
		mention []string // substrings of the error message
	}{
		{"report", 4096, 1000, 413, []string{"topk", "4096000", "327680"}},
		{"one over", 328, 1000, 413, []string{"topk", "328000", "327680"}},
		{"at the limit", 32768, 10, 200, nil},
		{"many queries, small topk", 4096, 24, 200, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", queriesBody("paris", tc.n, tc.k))
			if code != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", code, tc.status, body)
			}
			if code == 200 {
				return
			}
			msg, field := errorBody(t, body)
			if field != "topk" {
				t.Errorf("field %q, want \"topk\": lowering topk is the usual fix", field)
			}
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("error %q does not mention %q (the product and the limit)", msg, m)
				}
			}
		})
	}
}

// TestNearMissFields: a mistyped known field must not be silently ignored
// (top_k used to give the default 3 results), while genuinely unknown
// extras still pass.
func TestNearMissFields(t *testing.T) {
	s, _ := newTestServer(t, nil)
	tests := []struct {
		name, body   string
		status       int
		field, known string // want field and did-you-mean suggestion
	}{
		{"top_k", `{"queries":["film"],"top_k":10}`, 400, "top_k", "topk"},
		{"TopK", `{"queries":["film"],"TopK":10}`, 400, "TopK", "topk"},
		{"returnScores", `{"queries":["film"],"returnScores":true}`, 400, "returnScores", "return_scores"},
		{"return-scores", `{"queries":["film"],"return-scores":true}`, 400, "return-scores", "return_scores"},
		{"Retriever", `{"queries":["film"],"Retriever":"e5"}`, 400, "Retriever", "retriever"},
		{"Queries wins over missing", `{"Queries":["film"]}`, 400, "Queries", "queries"},
		{"near miss beside the right key", `{"queries":["film"],"topk":2,"top_k":10}`, 400, "top_k", "topk"},
		{"first in key order", `{"queries":["film"],"top_k":1,"Retriever":"e5"}`, 400, "Retriever", "retriever"},
		{"unknown extras pass", `{"queries":["paris"],"topk":1,"session_id":"abc","meta":{"topk":9}}`, 200, "", ""},
		// "k" is rLLM's and R1-Searcher's name for topk (server/dialect.go):
		// once an unknown extra, now a field of another dialect, refused by
		// name rather than answered with the default 3.
		{"another dialect's field", `{"queries":["paris"],"topk":1,"k":5}`, 400, "k", ""},
		{"misspelt queries still missing", `{"query":["paris"]}`, 400, "queries", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", tc.body)
			if code != tc.status {
				t.Fatalf("status %d, want %d; body %s", code, tc.status, body)
			}
			if code == 200 {
				return
			}
			msg, field := errorBody(t, body)
			if field != tc.field {
				t.Errorf("field %q, want %q (message %q)", field, tc.field, msg)
			}
			if tc.known != "" {
				want := `unknown field "` + tc.field + `": did you mean "` + tc.known + `"?`
				if msg != want {
					t.Errorf("error %q, want %q", msg, want)
				}
			}
		})
	}
}

// TestInvalidUTF8Body: encoding/json would replace invalid bytes inside a
// string with U+FFFD and answer 200 for a query the client never sent.
func TestInvalidUTF8Body(t *testing.T) {
	s, _ := newTestServer(t, nil)
	tests := []struct {
		name, body string
		offset     string
	}{
		{"lone continuation byte in a query", "{\"queries\":[\"par\x80is\"]}", "byte offset 16"},
		{"latin-1 é", "{\"queries\":[\"caf\xe9\"]}", "byte offset 16"},
		{"truncated sequence", "{\"queries\":[\"\xe2\x98\"]}", "byte offset 13"},
		{"surrogate encoded in UTF-8", "{\"queries\":[\"\xed\xa0\x80\"]}", "byte offset 13"},
		{"in an ignored extra field", "{\"queries\":[\"paris\"],\"x\":\"\xff\"}", "byte offset 26"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", tc.body)
			if code != 400 {
				t.Fatalf("status %d, want 400; body %s", code, body)
			}
			msg, field := errorBody(t, body)
			if field != "" {
				t.Errorf("field %q, want \"\" (the body)", field)
			}
			if !strings.Contains(msg, "UTF-8") || !strings.Contains(msg, tc.offset) {
				t.Errorf("error %q, want one saying UTF-8 and %q", msg, tc.offset)
			}
		})
	}
	// Valid multi-byte text and escaped non-ASCII still work.
	code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["café ☕ tokyo","caf\u00e9"],"topk":1}`)
	if code != 200 {
		t.Fatalf("valid UTF-8: status %d, body %s", code, body)
	}
}

// TestContentType: JSON and the defaults of curl and requests pass;
// clearly non-JSON types get 415 naming Content-Type.
func TestContentType(t *testing.T) {
	s, _ := newTestServer(t, nil)
	const body = `{"queries":["paris"],"topk":1}`
	tests := []struct {
		ct     string // "" = no header
		status int
	}{
		{"", 200},
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON", 200},
		{"application/vnd.api+json", 200},
		{"text/plain", 200},
		{"text/plain;charset=UTF-8", 200},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=xyz", 415},
		{"application/xml", 415},
		{"text/xml; charset=utf-8", 415},
		{"text/html", 415},
	}
	for _, tc := range tests {
		t.Run(tc.ct, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/retrieve", strings.NewReader(body))
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if rec.Code == 200 {
				return
			}
			msg, field := errorBody(t, rec.Body.String())
			if field != "Content-Type" {
				t.Errorf("field %q, want \"Content-Type\"", field)
			}
			if !strings.Contains(msg, "application/json") {
				t.Errorf("error %q does not say to send application/json", msg)
			}
		})
	}
}

// TestMaxResultsConfig covers Config.MaxResults: the default topk counts,
// and Validate rejects a negative limit.
func TestMaxResultsConfig(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxResults = 5 })
	code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["a","b"]}`)
	if code != 413 {
		t.Fatalf("2 queries × default topk 3 with MaxResults 5: status %d, want 413; body %s", code, body)
	}
	if _, field := errorBody(t, body); field != "topk" {
		t.Errorf("field %q, want topk", field)
	}
	if code, _, body := do(t, s.Handler(), http.MethodPost, "/retrieve", `{"queries":["a","b"],"topk":2}`); code != 200 {
		t.Fatalf("2 × 2 with MaxResults 5: status %d, body %s", code, body)
	}
	if got := newServerDefaults(t).cfg.MaxResults; got != DefaultMaxResults {
		t.Errorf("default MaxResults %d, want %d", got, DefaultMaxResults)
	}
	_, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, MaxResults: -1})
	if err == nil || !strings.Contains(err.Error(), "Config.MaxResults") {
		t.Errorf("MaxResults -1: error %v, want one naming Config.MaxResults", err)
	}
	_, err = New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, ReadTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "Config.ReadTimeout") {
		t.Errorf("ReadTimeout -1s: error %v, want one naming Config.ReadTimeout", err)
	}
}

func newServerDefaults(t *testing.T) *Server {
	t.Helper()
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": fixedRetriever{}}, Docs: testCorpus, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSlowBodyIsCut: headers arrive, the body stalls. Before ReadTimeout
// the connection was held forever (only headers had a timeout); now the
// client gets a 408 JSON error and the connection is closed.
func TestSlowBodyIsCut(t *testing.T) {
	s, bm := newTestServer(t, func(c *Config) { c.ReadTimeout = 200 * time.Millisecond })
	bm.delay = 600 * time.Millisecond // longer than ReadTimeout
	if got := newServerDefaults(t).cfg.ReadTimeout; got != DefaultReadTimeout {
		t.Errorf("default ReadTimeout %v, want %v", got, DefaultReadTimeout)
	}
	addr := serveTCP(t, s)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Generous bound on the test itself; what is checked is that the server
	// answers at all, not how fast.
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"queries\":")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408; body %s", resp.StatusCode, b.String())
	}
	if msg, field := errorBody(t, b.String()); field != "" || !strings.Contains(msg, "body") {
		t.Errorf("error %q field %q, want one about the body with field \"\"", msg, field)
	}
	if n := bm.calls.Load(); n != 0 {
		t.Errorf("retriever called %d times for a body that never arrived", n)
	}

	// A retrieval longer than ReadTimeout is not cut: there is no write
	// timeout, and the read deadline covers only reading the request.
	resp, err = http.Post("http://"+addr+"/retrieve", "application/json", strings.NewReader(`{"queries":["berlin"],"topk":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	bufio.NewReader(resp.Body).WriteTo(&b)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(b.String(), "Berlin") {
		t.Fatalf("slow retrieval: %d %s, want 200 with Berlin", resp.StatusCode, b.String())
	}
}
