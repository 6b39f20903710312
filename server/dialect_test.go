package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/rlsearch/rlsearch"
)

// dialectServer serves testCorpus through a fixed retriever (so that the
// replies below are exact), with a reranker scoring by text length.
func dialectServer(t testing.TB, mod func(*Config)) *Server {
	t.Helper()
	fixed := fixedRetriever{
		"q1":    {{Row: 2, Score: 1.5}, {Row: 3, Score: 0.3}, {Row: 0, Score: 1e-7}, {Row: 1, Score: 0}},
		"q2":    {{Row: 6, Score: -2.25}},
		"paris": {{Row: 0, Score: 2}, {Row: 1, Score: 1}},
	}
	cfg := Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": fixed},
		Docs:       testCorpus,
		Logger:     quietLogger(),
		Registry:   prometheus.NewRegistry(),
		Reranker:   lengthReranker{},
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lengthReranker scores a passage by its length in bytes, so that ties
// (equal lengths) exist and the order is easy to state.
type lengthReranker struct{}

func (lengthReranker) Name() string { return "length" }
func (lengthReranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	out := make([]float32, len(docs))
	for i, d := range docs {
		out[i] = float32(len(d.Text()) % 7)
	}
	return out, nil
}

func post(t testing.TB, h http.Handler, path, ct string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func mustMsgpack(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSkyRLIsSearchR1ForOneQuery: SkyRL's {"query"} gets, byte for byte,
// Search-R1's reply to {"queries": [query]} (its _passages2string reads
// result[i][j]["document"]["contents"]).
func TestSkyRLIsSearchR1ForOneQuery(t *testing.T) {
	s := dialectServer(t, nil)
	for _, tc := range []struct{ skyrl, searchR1 string }{
		{`{"query":"q1","topk":3,"return_scores":true}`, `{"queries":["q1"],"topk":3,"return_scores":true}`},
		{`{"query":"q2"}`, `{"queries":["q2"]}`},
		{`{"query":"   ","topk":2}`, `{"queries":["   "],"topk":2}`},
		{`{"query":"nothing","return_scores":true}`, `{"queries":["nothing"],"return_scores":true}`},
	} {
		a := post(t, s.Handler(), "/retrieve", "application/json", []byte(tc.skyrl))
		b := post(t, s.Handler(), "/retrieve", "application/json", []byte(tc.searchR1))
		if a.Code != 200 || a.Body.String() != b.Body.String() {
			t.Errorf("%s: %d %s\nwant %s", tc.skyrl, a.Code, a.Body, b.Body)
		}
	}
}

// TestDialectReplies pins every dialect's reply to its request, as each
// upstream client reads it (integrations/tests drives the same endpoints
// with stand-ins of the clients).
func TestDialectReplies(t *testing.T) {
	s := dialectServer(t, nil)
	doc0 := `{"id":"0","contents":"\"Paris\"\nParis is the capital of France."}`
	doc1 := `{"id":"1","contents":"\"France\"\nFrance is a country in Europe; its capital is Paris."}`
	url0 := `"url":"https://en.wikipedia.org/wiki/Paris"`
	tests := []struct {
		name, profile, path, body, want string
	}{
		{"rLLM top_k", "", "/retrieve", `{"query":"paris","top_k":2}`,
			`{"query":"paris","results":[{"id":"0","content":"\"Paris\"\nParis is the capital of France.","score":2,"document":` + doc0 + `},{"id":"1","content":"\"France\"\nFrance is a country in Europe; its capital is Paris.","score":1,"document":` + doc1 + `}],"num_results":2}` + "\n"},
		{"rLLM k", "", "/retrieve", `{"query":"paris","k":1}`,
			`{"query":"paris","results":[{"id":"0","content":"\"Paris\"\nParis is the capital of France.","score":2,"document":` + doc0 + `}],"num_results":1}` + "\n"},
		{"rLLM blank query", "", "/retrieve", `{"query":" ","top_k":3}`, `{"query":" ","results":[],"num_results":0}` + "\n"},
		{"BrowseComp-Plus", "browsecomp", "/retrieve", `{"query":"q1"}`,
			`{"result":[{"document":{"title":"Tokyo","text":"Tokyo is the capital of Japan. <b>&</b> café ☕"},"docid":"doc-2"},{"document":{"title":"The \"Quote\"","text":"back\\slash\ttab\u0001ctl\u2028sep"},"docid":"3"},{"document":{"title":"Paris","text":"Paris is the capital of France."},"docid":"0"},{"document":{"title":"France","text":"France is a country in Europe; its capital is Paris."},"docid":"1"}]}` + "\n"},
		{"ASearcher bare documents", "asearcher", "/retrieve", `{"queries":["paris"],"topk":1,"return_scores":false}`,
			`{"result":[[{"id":"0","contents":"\"Paris\"\nParis is the capital of France.",` + url0 + `}]]}`},
		{"ASearcher scored", "asearcher", "/retrieve", `{"queries":["paris"],"topk":1,"return_scores":true}`,
			`{"result":[[{"document":{"id":"0","contents":"\"Paris\"\nParis is the capital of France.",` + url0 + `},"score":2}]]}`},
		{"Search-R1 on the asearcher listener keeps its shape otherwise", "asearcher", "/retrieve", `{"queries":["nothing"]}`, `{"result":[[]]}`},
		{"R1-Searcher", "", "/queries", `{"queries":["paris","q2"],"k":1}`,
			`{"queries":["paris","q2"],"answers":[["\"Paris\"\nParis is the capital of France."],["\"Berlin\"\nBerlin is the capital of Germany."]]}` + "\n"},
		{"R1-Searcher default k 3", "", "/queries", `{"queries":["q1"]}`,
			`{"queries":["q1"],"answers":[["\"Tokyo\"\nTokyo is the capital of Japan. <b>&</b> café ☕","\"The \"Quote\"\"\nback\\slash\ttab\u0001ctl\u2028sep","\"Paris\"\nParis is the capital of France."]]}` + "\n"},
		{"ReCall search", "", "/search", `{"query":"paris","top_n":2}`, `[` + doc0 + `,` + doc1 + `]` + "\n"},
		{"ReCall search with scores", "", "/search", `{"query":"paris","top_n":2,"return_score":true}`, `[[` + doc0 + `,` + doc1 + `],[2,1]]` + "\n"},
		{"ReCall batch", "", "/batch_search", `{"query":["paris","q2"],"top_n":1}`, `[[` + doc0 + `],[{"id":"6","contents":"\"Berlin\"\nBerlin is the capital of Germany."}]]` + "\n"},
		{"ReCall batch with scores", "", "/batch_search", `{"query":["q2"],"top_n":1,"return_score":true}`, `[[[{"id":"6","contents":"\"Berlin\"\nBerlin is the capital of Germany."}]],[[-2.25]]]` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			rec := post(t, s.ProfileHandler(p), tc.path, "application/json", []byte(tc.body))
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("reply\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestRetrieveRerankOrder: StepSearch's endpoint keeps the topk best of
// topk_retrieval candidates by the reranker's score, ties by ascending
// row, and answers in Search-R1's shape.
func TestRetrieveRerankOrder(t *testing.T) {
	s := dialectServer(t, nil)
	// Candidates of q1: rows 2, 3, 0, 1. lengthReranker: len(text) % 7.
	want := []struct{ row int32 }{}
	type cand struct {
		row   int32
		score float32
	}
	var cs []cand
	for _, row := range []int32{2, 3, 0, 1} {
		cs = append(cs, cand{row, float32(len(testCorpus[row].Text()) % 7)})
	}
	// Sort as the server must: score descending, row ascending.
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if cs[j].score > cs[i].score || cs[j].score == cs[i].score && cs[j].row < cs[i].row {
				cs[i], cs[j] = cs[j], cs[i]
			}
		}
	}
	for _, c := range cs[:3] {
		want = append(want, struct{ row int32 }{c.row})
	}
	rec := post(t, s.Handler(), "/retrieve/rerank", "", []byte(`{"queries":["q1","q2"],"topk":3,"topk_retrieval":4,"return_scores":true}`))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got struct {
		Result [][]struct {
			Document rlsearch.Document `json:"document"`
			Score    float64           `json:"score"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Result) != 2 || len(got.Result[0]) != 3 || len(got.Result[1]) != 1 {
		t.Fatalf("shape %s", rec.Body)
	}
	for i, w := range want {
		if g := got.Result[0][i]; g.Document.ID != testCorpus[w.row].ID || g.Score != float64(cs[i].score) {
			t.Errorf("rank %d: %s score %v, want %s score %v", i, g.Document.ID, g.Score, testCorpus[w.row].ID, cs[i].score)
		}
	}
	for _, tc := range []struct{ body, field string }{
		{`{"queries":["q1"],"topk":5,"topk_retrieval":4}`, "topk"},
		{`{"queries":["q1"],"top_k":5}`, "top_k"},
		{`{"query":"q1"}`, "query"},
	} {
		rec := post(t, s.Handler(), "/retrieve/rerank", "", []byte(tc.body))
		if _, field := errorBody(t, rec.Body.String()); rec.Code != 400 || field != tc.field {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.body, rec.Code, rec.Body, tc.field)
		}
	}
	noRerank := dialectServer(t, func(c *Config) { c.Reranker = nil })
	if rec := post(t, noRerank.Handler(), "/retrieve/rerank", "", []byte(`{"queries":["q1"]}`)); rec.Code != 404 || !strings.Contains(rec.Body.String(), "--reranker") {
		t.Errorf("without a reranker: %d %s, want 404 naming --reranker", rec.Code, rec.Body)
	}
}

// TestGEMMessagePack: GEM posts msgspec.msgpack.encode({"query", "topk",
// "return_scores"}) with no Content-Type and decodes the reply with
// msgspec.msgpack.decode(...)["result"], a flat list of {"document",
// "score"}; a batch in MessagePack gets Search-R1's nested reply in
// MessagePack.
func TestGEMMessagePack(t *testing.T) {
	s := dialectServer(t, nil)
	rec := post(t, s.Handler(), "/retrieve", "", mustMsgpack(t, map[string]any{"query": "paris", "topk": 2, "return_scores": true}))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != MsgpackContentType {
		t.Fatalf("status %d Content-Type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var got map[string]any
	if err := msgpack.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"result": []any{
		map[string]any{"document": map[string]any{"id": "0", "contents": testCorpus[0].Contents}, "score": 2.0},
		map[string]any{"document": map[string]any{"id": "1", "contents": testCorpus[1].Contents}, "score": 1.0},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reply %v\nwant %v", got, want)
	}
	// return_scores false: GEM's server sends score None.
	rec = post(t, s.Handler(), "/retrieve", "", mustMsgpack(t, map[string]any{"query": "q2", "topk": 1, "return_scores": false}))
	got = nil
	if err := msgpack.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := []any{map[string]any{"document": map[string]any{"id": "6", "contents": testCorpus[6].Contents}, "score": nil}}; !reflect.DeepEqual(got["result"], want) {
		t.Errorf("without scores: %v, want %v", got["result"], want)
	}
	// A batch in MessagePack: the same values as the JSON reply.
	rec = post(t, s.Handler(), "/retrieve", "application/msgpack", mustMsgpack(t, map[string]any{"queries": []string{"q1", "q2"}, "topk": 2, "return_scores": true}))
	got = nil
	if err := msgpack.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %q", err, rec.Body)
	}
	js := post(t, s.Handler(), "/retrieve", "", []byte(`{"queries":["q1","q2"],"topk":2,"return_scores":true}`))
	var jsv map[string]any
	json.Unmarshal(js.Body.Bytes(), &jsv)
	if !reflect.DeepEqual(normalizeNumbers(got), normalizeNumbers(jsv)) {
		t.Errorf("MessagePack batch %v\n  JSON batch %v", got, jsv)
	}
	// Errors: JSON, naming the field, whatever the body's encoding.
	rec = post(t, s.Handler(), "/retrieve", "", mustMsgpack(t, map[string]any{"query": "paris", "topk": "3"}))
	if msg, field := errorBody(t, rec.Body.String()); rec.Code != 400 || field != "topk" {
		t.Errorf("bad topk in MessagePack: %d %q %q", rec.Code, field, msg)
	}
	rec = post(t, s.Handler(), "/retrieve", "application/json", mustMsgpack(t, map[string]any{"query": "paris"}))
	if msg, field := errorBody(t, rec.Body.String()); rec.Code != 400 || field != "Content-Type" || !strings.Contains(msg, "MessagePack") {
		t.Errorf("MessagePack sent as JSON: %d %q %q", rec.Code, field, msg)
	}
}

// normalizeNumbers turns every number into float64 (MessagePack keeps
// integers apart from floats; JSON does not).
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalizeNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeNumbers(e)
		}
		return out
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int:
		b, _ := json.Marshal(x)
		var f float64
		json.Unmarshal(b, &f)
		return f
	case float32:
		return float64(x)
	}
	return v
}

// TestDialectStrictness: a field of another dialect is a 400 naming it,
// never a silent guess; so is a near-miss.
func TestDialectStrictness(t *testing.T) {
	s := dialectServer(t, nil)
	tests := []struct {
		name, profile, path, body, field, msg string
	}{
		{"SkyRL topk and rLLM top_k", "", "/retrieve", `{"query":"a","topk":3,"top_k":3}`, "top_k", `both "topk"`},
		{"SkyRL topk and rLLM k", "", "/retrieve", `{"query":"a","topk":3,"k":3}`, "k", `both "topk"`},
		{"rLLM top_k and k", "", "/retrieve", `{"query":"a","top_k":3,"k":3}`, "k", `both "top_k" and "k"`},
		{"batch and single", "", "/retrieve", `{"queries":["a"],"query":"a"}`, "query", "belongs to"},
		{"R1-Searcher's k on /retrieve", "", "/retrieve", `{"queries":["a"],"k":3}`, "k", "R1-Searcher"},
		{"ReCall's top_n on /retrieve", "", "/retrieve", `{"query":"a","top_n":3}`, "top_n", "ReCall"},
		{"rLLM with return_scores", "", "/retrieve", `{"query":"a","top_k":3,"return_scores":true}`, "return_scores", "belongs to"},
		{"near miss in rLLM", "", "/retrieve", `{"query":"a","top_k":3,"Query":"b"}`, "Query", `did you mean "query"`},
		{"query list", "", "/retrieve", `{"query":["a","b"]}`, "queries", `"query" holds a list`},
		{"batch on browsecomp", "browsecomp", "/retrieve", `{"queries":["a"]}`, "queries", "profile browsecomp"},
		{"topk on browsecomp", "browsecomp", "/retrieve", `{"query":"a","topk":3}`, "topk", "k = 5 fixed"},
		{"missing query on browsecomp", "browsecomp", "/retrieve", `{}`, "query", "missing"},
		{"topk on /queries", "", "/queries", `{"queries":["a"],"topk":3}`, "topk", "Search-R1"},
		{"query on /queries", "", "/queries", `{"query":"a"}`, "query", "belongs to"},
		{"list on /search", "", "/search", `{"query":["a"]}`, "query", "/batch_search"},
		{"string on /batch_search", "", "/batch_search", `{"query":"a"}`, "query", "list of strings"},
		{"top_k on /search", "", "/search", `{"query":"a","top_k":3}`, "top_k", "rLLM"},
		{"return_scores on /search", "", "/search", `{"query":"a","return_scores":true}`, "return_scores", "belongs to"},
		{"k too large", "", "/queries", `{"queries":["a"],"k":1001}`, "k", "between 1 and 1000"},
		{"top_n fraction", "", "/search", `{"query":"a","top_n":2.5}`, "top_n", "integer"},
		{"urls not a list", "", "/access", `{"urls":"https://x"}`, "urls", "list of strings"},
		{"queries on /access", "", "/access", `{"queries":["a"]}`, "queries", "belongs to"},
		{"max_bytes too small", "", "/access", `{"urls":["a"],"max_bytes":10}`, "max_bytes", "at least"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := ParseProfile(tc.profile)
			rec := post(t, s.ProfileHandler(p), tc.path, "application/json", []byte(tc.body))
			msg, field := errorBody(t, rec.Body.String())
			if rec.Code != 400 || field != tc.field || !strings.Contains(msg, tc.msg) {
				t.Errorf("%d field %q %q, want 400 naming %q with %q", rec.Code, field, msg, tc.field, tc.msg)
			}
		})
	}
}

// TestMsgpackToJSON: the transcoder keeps every value and refuses what
// JSON cannot hold, naming where.
func TestMsgpackToJSON(t *testing.T) {
	good := map[string]any{"query": "café ☕", "topk": 3, "neg": -7, "big": uint64(1 << 63), "f": 0.5, "f32": float32(0.25),
		"nil": nil, "b": true, "list": []any{"a", 1, []any{}, map[string]any{"x": "y"}}}
	js, err := msgpackToJSON(mustMsgpack(t, good))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if back["big"].(json.Number).String() != "9223372036854775808" || back["query"] != "café ☕" || back["f32"].(json.Number).String() != "0.25" {
		t.Errorf("transcoded %s", js)
	}
	for _, tc := range []struct {
		name string
		body []byte
		msg  string
	}{
		// Found by FuzzMsgpackToJSON (testdata/fuzz/FuzzMsgpackToJSON/582528ddfad69eb5):
		// the positive fixint 0x30 was transcoded to the JSON number 48.
		{"top level not a map", []byte("0"), "must be a map"},
		{"binary", mustMsgpack(t, map[string]any{"q": []byte("x")}), "binary data"},
		{"int key", []byte{0x81, 0x01, 0x02}, "not a string"},
		{"truncated", mustMsgpack(t, map[string]any{"query": "abcdef"})[:6], "truncated"},
		{"claims 2^32 entries", []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'a'}, "truncated"},
		{"claims a huge array", []byte{0x81, 0xa1, 'a', 0xdd, 0xff, 0xff, 0xff, 0xff}, "truncated"},
		{"NaN", []byte{0x81, 0xa1, 'a', 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, "not a number"},
		{"trailing", append(mustMsgpack(t, map[string]any{"a": 1}), 0xc0), "after the map"},
		{"invalid UTF-8", []byte{0x81, 0xa1, 'a', 0xa1, 0xff}, "not valid UTF-8"},
		{"extension", []byte{0x81, 0xa1, 'a', 0xd4, 0x01, 0x00}, "extension"},
		{"deep", append(append([]byte{0x81, 0xa1, 'a'}, bytes.Repeat([]byte{0x91}, 100)...), 0xc0), "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := msgpackToJSON(tc.body)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want one containing %q", err, tc.msg)
			}
		})
	}
}

// TestUnansweredCounted: a request the server cannot answer is counted
// under its dialect and route, and logged once per interval with the
// client's address.
func TestUnansweredCounted(t *testing.T) {
	var logs syncBuffer
	s := dialectServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.UnansweredLogEvery = 100 * time.Millisecond
	})
	for range 3 {
		req := httptest.NewRequest(http.MethodPost, "/retrieve", strings.NewReader(`{"query":"a","topk":"x"}`))
		req.RemoteAddr = "10.1.2.3:5555"
		s.Handler().ServeHTTP(httptest.NewRecorder(), req)
	}
	post(t, s.Handler(), "/nowhere", "", []byte(`{}`))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	metrics, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`rlsearch_unanswered_requests_total{code="400",dialect="skyrl",route="/retrieve"} 3`,
		`rlsearch_unanswered_requests_total{code="404",dialect="unknown",route="other"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if n := strings.Count(logs.String(), `unanswered request"`); n != 2 {
		t.Errorf("%d first-of-stream lines, want 2 (one per dialect and route):\n%s", n, logs.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), `unanswered requests"`) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, "requests=2") || !strings.Contains(l, "10.1.2.3 (2)") {
		t.Errorf("no summary line with the 2 later requests and their client:\n%s", l)
	}
}
