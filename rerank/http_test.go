package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server"
)

// handlerConfig is what cmd/rlsearch serve gives POST /rerank.
type handlerConfig struct {
	DefaultTopK, MaxQueries, MaxDocs int
	MaxBodyBytes                     int64
}

// newHandler serves svc as serve mounts it: through server, with
// unknown keys ignored (Search-R1 clients send extras).
func newHandler(r rlsearch.Reranker, c handlerConfig) (http.Handler, error) {
	svc, err := NewService(r, ServiceConfig{DefaultTopK: c.DefaultTopK, MaxQueries: c.MaxQueries, MaxDocs: c.MaxDocs})
	if err != nil {
		return nil, err
	}
	max := c.MaxBodyBytes
	if max == 0 {
		max = DefaultMaxRerankBody
	}
	return server.EndpointHandler(server.JSON(svc.Serve, server.EndpointOptions{MaxBodyBytes: max, IgnoreUnknown: true})), nil
}

// fakeReranker scores a document by a deterministic function of query and
// contents: the number of query words the contents contain, plus a small
// length-based tie breaker; it records the pairs it saw.
type fakeReranker struct {
	mu    sync.Mutex
	pairs map[string][]string // query -> contents seen
	calls atomic.Int64
	fail  error
	fixed []float32 // when set, returned as is (for Check tests)
}

func (f *fakeReranker) Name() string { return "fake" }

func (f *fakeReranker) Rerank(ctx context.Context, q string, docs []rlsearch.Document) ([]float32, error) {
	f.calls.Add(1)
	if f.fail != nil {
		return nil, f.fail
	}
	if f.fixed != nil {
		return f.fixed, nil
	}
	f.mu.Lock()
	if f.pairs == nil {
		f.pairs = map[string][]string{}
	}
	out := make([]float32, len(docs))
	for i, d := range docs {
		f.pairs[q] = append(f.pairs[q], d.Contents)
		for _, w := range strings.Fields(strings.ToLower(q)) {
			if strings.Contains(strings.ToLower(d.Contents), w) {
				out[i]++
			}
		}
		out[i] += float32(len(d.Contents)%7) / 100
	}
	f.mu.Unlock()
	return out, nil
}

func post(t *testing.T, h http.Handler, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rerank", strings.NewReader(body)))
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("reply is not JSON (%d): %q", rec.Code, rec.Body.String())
	}
	return rec.Code, m
}

func doc(id, contents string) string {
	b, _ := json.Marshal(rlsearch.Document{ID: id, Contents: contents})
	return string(b)
}

func TestRerankContract(t *testing.T) {
	f := &fakeReranker{}
	h, err := newHandler(f, handlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	A := doc("a", "\"Paris\"\nParis is the capital of France")
	B := doc("b", "\"Cell\"\nThe mitochondria")
	C := doc("c", "\"Berlin\"\nBerlin is the capital of Germany")
	body := fmt.Sprintf(`{"queries": ["capital of France", "mitochondria", "nothing here", "capital of France"],
		"documents": [[%s, %s, %s], [{"document": %s, "score": 3.5}, %s], [], [%s, %s, %s]],
		"rerank_topk": 5, "return_scores": true}`, A, A, B, B, A, C, A, B)
	code, m := post(t, h, body)
	if code != 200 {
		t.Fatalf("status %d: %v", code, m)
	}
	res := m["result"].([]any)
	if len(res) != 4 {
		t.Fatalf("%d result lists for 4 queries", len(res))
	}
	ids := func(l any) []string {
		var out []string
		for _, it := range l.([]any) {
			out = append(out, it.(map[string]any)["document"].(map[string]any)["id"].(string))
		}
		return out
	}
	scores := func(l any) []float64 {
		var out []float64
		for _, it := range l.([]any) {
			out = append(out, it.(map[string]any)["score"].(float64))
		}
		return out
	}
	// [A, A, B]: A once, with its own score, above B.
	if got := ids(res[0]); strings.Join(got, ",") != "a,b" {
		t.Errorf("query 0 ids %v, want [a b] (duplicate A listed once)", got)
	}
	if s := scores(res[0]); !(s[0] > s[1]) || s[0] < 3 {
		t.Errorf("query 0 scores %v: A must keep its own (higher) score", s)
	}
	if got := ids(res[1]); strings.Join(got, ",") != "b,a" {
		t.Errorf("query 1 ids %v, want [b a]", got)
	}
	if l := res[2].([]any); len(l) != 0 {
		t.Errorf("query without documents got %v, want []", l)
	}
	if got := ids(res[3]); strings.Join(got, ",") != "a,c,b" {
		t.Errorf("query 3 ids %v, want [a c b]", got)
	}
	// Each query saw only its own documents.
	for q, seen := range f.pairs {
		for _, c := range seen {
			if q == "mitochondria" && strings.Contains(c, "Berlin") {
				t.Errorf("query %q was scored against another query's document %q", q, c)
			}
		}
	}

	// rerank_topk cuts, return_scores false gives bare documents.
	code, m = post(t, h, fmt.Sprintf(`{"queries": ["capital of France"], "documents": [[%s, %s, %s]], "rerank_topk": 2}`, C, B, A))
	if code != 200 {
		t.Fatalf("status %d: %v", code, m)
	}
	l := m["result"].([]any)[0].([]any)
	if len(l) != 2 || l[0].(map[string]any)["id"] != "a" || l[0].(map[string]any)["contents"] == nil {
		t.Errorf("topk 2 bare result %v, want [a c] as bare documents", l)
	}
	// Empty request.
	code, m = post(t, h, `{"queries": [], "documents": []}`)
	if code != 200 || len(m["result"].([]any)) != 0 {
		t.Errorf("empty request: %d %v", code, m)
	}
	// {id, title, text} documents.
	code, m = post(t, h, `{"queries": ["x"], "documents": [[{"id": "t", "title": "T", "text": "body"}]], "return_scores": true}`)
	if code != 200 {
		t.Fatalf("title/text: %d %v", code, m)
	}
	if got := m["result"].([]any)[0].([]any)[0].(map[string]any)["document"].(map[string]any)["contents"]; got != "\"T\"\nbody" {
		t.Errorf("title/text contents %q", got)
	}
}

func TestRerankBadInput(t *testing.T) {
	h, _ := newHandler(&fakeReranker{}, handlerConfig{MaxQueries: 2, MaxDocs: 3, MaxBodyBytes: 400})
	for _, tc := range []struct {
		name, body, field string
		status            int
	}{
		{"not json", `{`, "", 400},
		{"trailing", `{"queries": [], "documents": []} x`, "", 400},
		{"no queries", `{"documents": []}`, "queries", 400},
		{"queries not list", `{"queries": "q", "documents": []}`, "queries", 400},
		{"no documents", `{"queries": ["q"]}`, "documents", 400},
		{"mismatch", `{"queries": ["q", "r"], "documents": [[]]}`, "documents", 400},
		{"too many queries", `{"queries": ["a", "b", "c"], "documents": [[], [], []]}`, "queries", 413},
		{"too many docs", `{"queries": ["a"], "documents": [[{"contents": "1"}, {"contents": "2"}, {"contents": "3"}, {"contents": "4"}]]}`, "documents", 413},
		{"doc without contents", `{"queries": ["a"], "documents": [[{"id": "x"}]]}`, "documents[0][0]", 400},
		{"doc not object", `{"queries": ["a"], "documents": [[3]]}`, "documents[0][0]", 400},
		{"negative topk", `{"queries": ["a"], "documents": [[]], "rerank_topk": -1}`, "rerank_topk", 400},
		{"topk (the /retrieve name)", `{"queries": ["a"], "documents": [[]], "topk": 3}`, "topk", 400},
		{"rerank_top_k", `{"queries": ["a"], "documents": [[]], "rerank_top_k": 3}`, "rerank_top_k", 400},
		{"TopK", `{"queries": ["a"], "documents": [[]], "TopK": 3}`, "TopK", 400},
		{"Queries", `{"Queries": ["a"], "documents": [[]]}`, "Queries", 400},
		{"return-scores", `{"queries": ["a"], "documents": [[]], "return-scores": true}`, "return-scores", 400},
		{"too big", `{"queries": ["` + strings.Repeat("a", 500) + `"], "documents": [[]]}`, "", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := post(t, h, tc.body)
			if code != tc.status || m["field"] != tc.field {
				t.Errorf("got %d field %q (%v), want %d field %q", code, m["field"], m["error"], tc.status, tc.field)
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/rerank", nil))
	if rec.Code != 405 {
		t.Errorf("GET: %d", rec.Code)
	}
	// Reranker errors: bad input 400, others 500.
	for _, tc := range []struct {
		err    error
		status int
	}{{fmt.Errorf("x: %w", rlsearch.ErrBadInput), 400}, {errors.New("onnx failed"), 500}} {
		h, _ := newHandler(&fakeReranker{fail: tc.err}, handlerConfig{})
		if code, _ := post(t, h, `{"queries": ["a"], "documents": [[{"contents": "x"}]]}`); code != tc.status {
			t.Errorf("reranker error %v: status %d, want %d", tc.err, code, tc.status)
		}
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		scores []float32
		ok     bool
	}{
		{"relevant on top", []float32{0.9, 0.1, 0.2}, true},
		{"constant", []float32{0.5, 0.5, 0.5}, false},
		{"irrelevant wins", []float32{0.4, 0.7, 0.1}, false},
		{"tie with irrelevant", []float32{0.4, 0.4, 0.1}, false},
		{"wrong count", []float32{0.9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(ctx, &fakeReranker{fixed: tc.scores})
			if (err == nil) != tc.ok {
				t.Fatalf("Check = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrCheckFailed) {
				t.Errorf("error %v does not wrap ErrCheckFailed", err)
			}
		})
	}
	if err := Check(ctx, &fakeReranker{fail: errors.New("boom")}); err == nil {
		t.Error("Check ignored a reranker error")
	}
	// The lexical fake behaves like a trained reranker on the check pair.
	if err := Check(ctx, &fakeReranker{}); err != nil {
		t.Errorf("lexical fake fails the check: %v", err)
	}
}

func TestDedup(t *testing.T) {
	a, b := rlsearch.Document{ID: "a", Contents: "x"}, rlsearch.Document{ID: "b", Contents: "y"}
	a2 := rlsearch.Document{ID: "a", Contents: "other"}
	uniq, at := Dedup([]rlsearch.Document{a, a, b, a2, b})
	if len(uniq) != 3 || fmt.Sprint(at) != "[0 0 1 2 1]" {
		t.Errorf("Dedup = %v %v", uniq, at)
	}
}

func FuzzRerankBody(f *testing.F) {
	for _, s := range []string{`{"queries": ["q"], "documents": [[{"id": "a", "contents": "x"}]]}`, `{`, `{"queries": null}`,
		`{"queries": ["a"], "documents": [[{"document": {"id": "a", "title": "t", "text": "x"}}]], "rerank_topk": 3}`} {
		f.Add(s)
	}
	h, _ := newHandler(&fakeReranker{}, handlerConfig{MaxQueries: 8, MaxDocs: 16})
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rerank", strings.NewReader(body)))
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("reply not JSON: %q", rec.Body.String())
		}
	})
}

// TestRerankBadInputMessages pins the messages a client reads: a near-miss
// names the field it meant, a non-object candidate says what was expected
// (not a Go type), and an unknown extra key passes.
func TestRerankBadInputMessages(t *testing.T) {
	h, _ := newHandler(&fakeReranker{}, handlerConfig{})
	for _, tc := range []struct{ name, body, want string }{
		{"topk", `{"queries": ["a"], "documents": [[]], "topk": 3}`, `unknown field "topk": did you mean "rerank_topk"?`},
		{"rerank_top_k", `{"queries": ["a"], "documents": [[]], "rerank_top_k": 3}`, `unknown field "rerank_top_k": did you mean "rerank_topk"?`},
		{"TopK", `{"queries": ["a"], "documents": [[]], "TopK": 3}`, `unknown field "TopK": did you mean "rerank_topk"?`},
		{"negative topk", `{"queries": ["a"], "documents": [[]], "rerank_topk": -2}`, `rerank_topk -2: must be >= 1 (0 or absent means 3)`},
		{"string doc", `{"queries": ["a"], "documents": [["plain string"]]}`, `documents[0][0] must be an object with "contents" (or "title"/"text"), got string`},
		{"null doc", `{"queries": ["a"], "documents": [[{"contents": "x"}, null]]}`, `documents[0][1] must be an object with "contents" (or "title"/"text"), got null`},
		{"string document", `{"queries": ["a"], "documents": [[{"document": "x"}]]}`, `documents[0][0].document must be an object with "contents" (or "title"/"text"), got string`},
		{"number contents", `{"queries": ["a"], "documents": [[{"contents": 3}]]}`, `documents[0][0].contents must be a string, got number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := post(t, h, tc.body)
			if code != 400 || m["error"] != tc.want {
				t.Errorf("got %d %q, want 400 %q", code, m["error"], tc.want)
			}
			if strings.Contains(fmt.Sprint(m["error"]), "struct") {
				t.Errorf("message shows a Go type: %q", m["error"])
			}
		})
	}
	// Extras pass; null rerank_topk means the default.
	for _, body := range []string{
		`{"queries": ["a"], "documents": [[{"contents": "x"}]], "request_id": 7}`,
		`{"queries": ["a"], "documents": [[{"contents": "x"}]], "rerank_topk": null}`,
	} {
		if code, m := post(t, h, body); code != 200 {
			t.Errorf("%s: %d %v, want 200", body, code, m["error"])
		}
	}
}

// TestRerankDefaultTopK: Search-R1's reranker_server.py keeps rerank_topk
// 3 when the request's is absent, null or 0 (`if not request.rerank_topk`);
// so do we (HandlerConfig.DefaultTopK, DefaultRerankTopK).
func TestRerankDefaultTopK(t *testing.T) {
	h, _ := newHandler(&fakeReranker{}, handlerConfig{})
	var docs []string
	for i := range 5 {
		docs = append(docs, doc(fmt.Sprint(i), fmt.Sprintf("passage %d about paris", i)))
	}
	list := "[" + strings.Join(docs, ",") + "]"
	for _, topk := range []string{``, `, "rerank_topk": null`, `, "rerank_topk": 0`} {
		code, m := post(t, h, `{"queries": ["paris", "x"], "documents": [`+list+`, `+list+`]`+topk+`}`)
		res, _ := m["result"].([]any)
		if code != 200 || len(res) != 2 {
			t.Fatalf("%q: %d %v", topk, code, m)
		}
		for i, l := range res {
			if n := len(l.([]any)); n != 3 {
				t.Errorf("rerank_topk %q: query %d kept %d documents, want 3", topk, i, n)
			}
		}
	}
}
