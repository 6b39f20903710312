package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
)

// limit is every endpoint's body limit in this test, so that the over-size
// bodies stay small.
const limit = 64 << 10

type wordRetriever struct{}

func (wordRetriever) Name() string { return "bm25" }
func (wordRetriever) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for i := range qs {
		for r := 0; r < min(k, 3); r++ {
			out[i] = append(out[i], rlsearch.Hit{Row: int32(r), Score: float32(3 - r)})
		}
	}
	return out, nil
}

type threeDocs struct{}

func (threeDocs) Len() int { return 3 }
func (threeDocs) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || row >= 3 {
		return rlsearch.Document{}, fmt.Errorf("row %d out of range", row)
	}
	return rlsearch.Document{ID: fmt.Sprintf("d%d", row), Contents: fmt.Sprintf("\"T%d\"\ntext %d", row, row)}, nil
}

type lenReranker struct{}

func (lenReranker) Name() string { return "len" }
func (lenReranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	out := make([]float32, len(docs))
	for i, d := range docs {
		out[i] = float32(len(d.Contents))
	}
	return out, nil
}

// allEndpoints builds a server with every endpoint `rlsearch serve`
// mounts (server/app's Add functions), each over the domain
// package's plain Serve function, and returns it with a valid body per
// POST path and the status that body gets.
func allEndpoints(t *testing.T) (*server.Server, map[string]string, map[string]int) {
	t.Helper()
	rs := map[string]rlsearch.Retriever{"bm25": wordRetriever{}}
	rt, err := sdk.New(sdk.Config{Retrievers: rs, Docs: threeDocs{}, Reranker: lenReranker{}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sdk.NewVerifier(rt, sdk.MutateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rerank.NewService(lenReranker{}, rerank.ServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := reward.New(reward.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := reward.NewService(reward.ServiceConfig{Scorer: sc})
	if err != nil {
		t.Fatal(err)
	}
	strict := server.EndpointOptions{MaxBodyBytes: limit}
	lenient := server.EndpointOptions{MaxBodyBytes: limit, IgnoreUnknown: true}
	extra := map[string]server.Endpoint{
		"/v1/programs/execute": server.JSON(rt.Serve, strict),
		"/v1/programs/mutate":  server.JSON(v.Serve, strict),
		"/rerank":              server.JSON(rr.Serve, lenient),
		"/v1/hybrid/execute":   server.JSON(hybrid.NewService(nil, hybrid.ServiceConfig{}).Serve, strict),
	}
	for _, k := range reward.Kinds {
		extra["/v1/rewards/"+string(k)] = server.JSON(func(ctx context.Context, req reward.Request) (reward.Response, error) {
			return rw.Serve(ctx, k, req)
		}, lenient)
	}
	srv, err := server.New(server.Config{
		Retrievers:   rs,
		Docs:         threeDocs{},
		MaxBodyBytes: limit,
		Extra:        extra,
		Reranker:     lenReranker{},
		Registry:     prometheus.NewRegistry(),
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	valid := map[string]string{
		"/retrieve":            `{"queries": ["capital"], "topk": 2}`,
		"/v1/programs/execute": `{"programs": [{"code": "print(sparse('capital', k=2))"}]}`,
		"/v1/programs/mutate":  `{"trajectories": [{"question": "q", "gold_ids": ["d1"], "turns": [{"role": "model", "text": "<code>print(sparse(\"q\", k=3))</code>"}]}], "executions": 4}`,
		"/rerank":              `{"queries": ["q"], "documents": [[{"id": "a", "contents": "x"}, {"id": "b", "contents": "xyz"}]], "rerank_topk": 1}`,
		"/v1/hybrid/execute":   `{"collection": "toys", "programs": [{"sql": "WHERE price < 3", "retrieval_list": []}]}`,
		// The other frameworks' dialects (server/dialect_retrieve.go).
		"/queries":         `{"queries": ["capital"], "k": 2}`,
		"/search":          `{"query": "capital", "top_n": 2}`,
		"/batch_search":    `{"query": ["capital"], "top_n": 2}`,
		"/retrieve/rerank": `{"queries": ["capital"], "topk": 1, "topk_retrieval": 2}`,
		"/access":          `{"urls": ["https://en.wikipedia.org/wiki/T1"]}`,
	}
	status := map[string]int{"/v1/hybrid/execute": 400} // no collection loaded: an unknown collection
	for _, k := range reward.Kinds {
		valid["/v1/rewards/"+string(k)] = `{"rollouts": []}`
	}
	return srv, valid, status
}

// TestHostileBodiesEveryEndpoint sends the same hostile bodies to every
// path the server answers and expects the same status and the same error
// JSON {"error", "field"} from each: 400 for trailing data, a second
// object, a near-miss field name, invalid UTF-8, 10,000 nested arrays, an
// empty body and a non-object; 415 for a form Content-Type; 413 with one
// wording for a body over the limit. GET-only paths answer 405 in the
// same shape. A valid body still gets its normal answer.
func TestHostileBodiesEveryEndpoint(t *testing.T) {
	srv, valid, status := allEndpoints(t)
	h := srv.Handler()
	paths := srv.Paths()
	if len(paths) != 18 {
		t.Errorf("server answers %d paths %v, want the 18 of serve with --reranker (12 + the dialects' /queries, /search, /batch_search, /retrieve/rerank, /access, /health)", len(paths), paths)
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			if path == "/healthz" || path == "/metrics" || path == "/health" {
				for _, tc := range testutil.HostileCases(`{"x": 1}`, limit) {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(tc.Body))))
					testutil.CheckErrorShape(t, rec.Result(), http.StatusMethodNotAllowed)
				}
				return
			}
			body, ok := valid[path]
			if !ok {
				t.Fatalf("no valid body for %s: add it to allEndpoints", path)
			}
			want := status[path]
			if want == 0 {
				want = 200
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if rec.Code != want {
				t.Fatalf("valid body: status %d, want %d: %s", rec.Code, want, rec.Body)
			}
			testutil.CheckHostile(t, h, path, body, limit)
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			testutil.CheckErrorShape(t, rec.Result(), http.StatusMethodNotAllowed)
		})
	}
	// Every endpoint's errors are counted under its own label.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	metrics, _ := io.ReadAll(rec.Body)
	for _, path := range paths {
		if path == "/metrics" {
			continue
		}
		if want := fmt.Sprintf(`rlsearch_http_requests_total{code="405",endpoint=%q}`, path); !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

type nanReranker struct{}

func (nanReranker) Name() string { return "nan" }
func (nanReranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	out := make([]float32, len(docs))
	for i, d := range docs {
		if strings.Contains(d.Contents, "nan!") {
			out[i] = float32(math.NaN())
		}
	}
	return out, nil
}

// TestRerankNaNThroughServer: a model score that is NaN is a 500 whose
// JSON error names the query and the document, counted as an internal
// error, with return_scores true and false (no model files needed; the
// ONNX variant is rerank's TestNonFiniteRerankEndpoint).
func TestRerankNaNThroughServer(t *testing.T) {
	rr, err := rerank.NewService(nanReranker{}, rerank.ServiceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": wordRetriever{}},
		Docs:       threeDocs{},
		Extra:      map[string]server.Endpoint{"/rerank": server.JSON(rr.Serve, server.EndpointOptions{IgnoreUnknown: true})},
		Registry:   prometheus.NewRegistry(),
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	for i, scores := range []string{"true", "false"} {
		body := `{"queries": ["a", "b"], "documents": [[{"id": "x", "contents": "fine"}], [{"id": "y", "contents": "ok"}, {"id": "z", "contents": "nan! here"}]], "return_scores": ` + scores + `}`
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rerank", strings.NewReader(body)))
		out := rec.Body.String()
		testutil.CheckErrorShape(t, rec.Result(), http.StatusInternalServerError)
		for _, m := range []string{`queries[1] \"b\"`, `documents[1][1] (id \"z\")`, "NaN"} {
			if !strings.Contains(out, m) {
				t.Errorf("return_scores %s: error %s does not mention %s", scores, out, m)
			}
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := fmt.Sprintf(`rlsearch_http_errors_total{kind="internal"} %d`, i+1)
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
