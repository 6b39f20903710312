package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/sdk"
)

const corpusText = `{"id": "p1", "title": "Paris", "text": "Paris is the capital and largest city of France."}
{"id": "p2", "title": "Berlin", "text": "Berlin is the capital of Germany and its largest city."}
{"id": "p3", "title": "Mount Everest", "text": "Mount Everest is Earth's highest mountain above sea level."}
`

// tinyIndex builds a three-passage BM25 index.
func tinyIndex(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	c := filepath.Join(tmp, "corpus.jsonl")
	if err := os.WriteFile(c, []byte(corpusText), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "idx")
	if _, err := index.Build(context.Background(), index.BuildConfig{Corpus: c, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNewAnswersEveryPath assembles the server over a tiny index (no
// model, reranker or collections) and sends a valid request to every path
// it reports: each must answer 200 (the hybrid endpoint, with no
// collection loaded, a 4xx naming the collection).
func TestNewAnswersEveryPath(t *testing.T) {
	svc, err := New(context.Background(), Config{Index: IndexConfig{Dir: tinyIndex(t)}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	bodies := map[string]string{
		"/retrieve":                `{"queries": ["capital of Germany"], "topk": 2}`,
		"/v1/programs/execute":     `{"programs": [{"code": "print(1)"}]}`,
		"/v1/programs/mutate":      `{"trajectories": [{"question": "q", "gold_ids": ["p2"], "turns": [{"role": "model", "text": "<code>print(sparse(\"capital of Germany\", k=3))</code>"}]}], "executions": 4}`,
		"/v1/hybrid/execute":       `{"collection": "toys", "programs": []}`,
		"/v1/rewards/qa":           `{"rollouts": [{"response": "<answer>Berlin</answer>", "golden_answers": ["Berlin"]}]}`,
		"/v1/rewards/rpl":          `{"rollouts": []}`,
		"/v1/rewards/search-p1":    `{"rollouts": []}`,
		"/v1/rewards/proretrieval": `{"rollouts": []}`,
		"/v1/rewards/retrieval":    `{"rollouts": [{"response": "<answer>capital of Germany</answer>", "gold_ids": ["p2"], "k": 2}]}`,
		"/healthz":                 "",
		"/metrics":                 "",
		"/ui/":                     "", // the inspector's page (GET)
		// The other frameworks' dialects (server/dialect_retrieve.go).
		"/queries":         `{"queries": ["capital of Germany"], "k": 2}`,
		"/search":          `{"query": "capital of Germany", "top_n": 2}`,
		"/batch_search":    `{"query": ["capital of Germany"], "top_n": 2}`,
		"/retrieve/rerank": `{"queries": ["capital of Germany"]}`,
		"/access":          `{"urls": ["https://en.wikipedia.org/wiki/Berlin"]}`,
		"/health":          "",
		"/mcp":             `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}`,
	}
	paths := svc.Paths()
	if len(paths) != len(bodies) {
		t.Errorf("paths %v, want the %d of %v", paths, len(bodies), slices.Sorted(func(yield func(string) bool) {
			for p := range bodies {
				if !yield(p) {
					return
				}
			}
		}))
	}
	h := svc.Handler()
	for _, p := range paths {
		body, ok := bodies[p]
		if !ok {
			t.Errorf("New serves %s, which this test does not know", p)
			continue
		}
		req := httptest.NewRequest(http.MethodGet, p, nil)
		if body != "" {
			req = httptest.NewRequest(http.MethodPost, p, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream") // MCP's streamable HTTP
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case p == "/retrieve/rerank":
			if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--reranker") {
				t.Errorf("%s without a reranker: %d %s; want 404 naming --reranker", p, rec.Code, rec.Body)
			}
		case p == "/v1/hybrid/execute":
			if rec.Code < 400 || rec.Code >= 500 || !strings.Contains(rec.Body.String(), "toys") {
				t.Errorf("%s without collections: %d %s; want a 4xx naming the collection", p, rec.Code, rec.Body)
			}
		case rec.Code != http.StatusOK:
			t.Errorf("%s: %d %s; want 200", p, rec.Code, rec.Body)
		case p == "/retrieve" && !strings.Contains(rec.Body.String(), `"p2"`):
			t.Errorf("/retrieve: %s; want Berlin (p2) among the hits", rec.Body)
		case p == "/v1/rewards/qa" && !strings.Contains(rec.Body.String(), `"em":1`):
			t.Errorf("/v1/rewards/qa: %s; want em 1", rec.Body)
		case p == "/access" && !strings.Contains(rec.Body.String(), `"contents":"\"Berlin\"\nBerlin is the capital`):
			t.Errorf("/access: %s; want Berlin's page", rec.Body)
		case p == "/mcp" && !strings.Contains(rec.Body.String(), `"serverInfo"`):
			t.Errorf("/mcp initialize: %s; want the server's info", rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if !strings.Contains(rec.Body.String(), `"models":{}`) {
		t.Errorf("/healthz: %s; want an empty models object (no encoder, no reranker)", rec.Body)
	}
	if svc.Index == nil || svc.Index.Len() != 3 {
		t.Errorf("Service.Index = %v, want the 3-passage index", svc.Index)
	}
}

// TestNewConfigErrors: configuration mistakes wrap ErrConfig and name the
// flag; other failures (a missing index) do not.
func TestNewConfigErrors(t *testing.T) {
	dir := tinyIndex(t)
	for _, tc := range []struct {
		name    string
		cfg     Config
		usage   bool
		message string
	}{
		{"no index", Config{}, true, "--index is required"},
		{"unserved retriever", Config{Index: IndexConfig{Dir: dir}, Retriever: "e5"}, true, `--retriever "e5" is not served`},
		{"negative bm25 parallel", Config{Index: IndexConfig{Dir: dir, BM25Parallel: -1}}, true, "--bm25-parallel -1"},
		{"not an index", Config{Index: IndexConfig{Dir: t.TempDir()}}, false, "not an index directory"},
		{"missing policy tokenizer", Config{Index: IndexConfig{Dir: dir}, PolicyTokenizer: filepath.Join(dir, "none.json")}, false, "none.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = slog.New(slog.DiscardHandler)
			svc, err := New(context.Background(), tc.cfg)
			if err == nil {
				svc.Close()
				t.Fatal("New succeeded")
			}
			if errors.Is(err, ErrConfig) != tc.usage || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("err %v: want ErrConfig %v and a message containing %q", err, tc.usage, tc.message)
			}
		})
	}
}

// TestOpenRuntime runs a program over the runtime programs and mutate use.
func TestOpenRuntime(t *testing.T) {
	rt, done, err := OpenRuntime(context.Background(), RuntimeConfig{Index: IndexConfig{Dir: tinyIndex(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	res := rt.Run(context.Background(), sdk.Request{Code: `print(sparse("capital of Germany", k=1))`}, nil)
	if res.Code != sdk.CodeOK || !slices.Equal(res.PrintedIDs, []string{"p2"}) {
		t.Errorf("result %+v; want code ok and Berlin (p2) printed", res)
	}
}
