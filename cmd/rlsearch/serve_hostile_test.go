package main

import (
	"cmp"
	"context"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server/app"
)

// TestServeHostileBodies sends the hostile bodies of testutil.HostileCases
// to every path `rlsearch serve` answers (without --reranker; /rerank is
// covered by server's TestHostileBodiesEveryEndpoint), each with
// its served body limit, and expects the same status and error JSON.
func TestServeHostileBodies(t *testing.T) {
	dir, _ := buildIndex(t)
	var s cmdflags.Serve
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	s.Bind(fs)
	if err := fs.Parse([]string{"--index", dir, "--max-body", "65536"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.AppConfig(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	srv := svc.Server
	h := srv.Handler()
	type ep struct {
		valid string
		limit int64
	}
	eps := map[string]ep{
		"/retrieve":            {`{"queries": ["capital of Germany"], "topk": 2}`, 65536},
		"/v1/programs/execute": {`{"programs": [{"code": "print(1)"}]}`, sdk.DefaultMaxBodyBytes},
		"/v1/programs/mutate":  {`{"trajectories": [], "executions": 4}`, sdk.DefaultMaxBodyBytes},
		"/v1/hybrid/execute":   {`{"collection": "toys", "programs": []}`, hybrid.DefaultMaxBodyBytes},
		// The other frameworks' dialects (server/dialect_retrieve.go), with /retrieve's limit.
		"/queries":         {`{"queries": ["capital of Germany"], "k": 2}`, 65536},
		"/search":          {`{"query": "capital of Germany", "top_n": 2}`, 65536},
		"/batch_search":    {`{"query": ["capital of Germany"], "top_n": 2}`, 65536},
		"/retrieve/rerank": {`{"queries": ["capital of Germany"]}`, 65536},
		"/access":          {`{"urls": ["https://en.wikipedia.org/wiki/Berlin"]}`, 65536},
	}
	for _, k := range reward.Kinds {
		eps["/v1/rewards/"+string(k)] = ep{`{"rollouts": []}`, reward.DefaultMaxBodyBytes}
	}
	for _, path := range srv.Paths() {
		t.Run(path, func(t *testing.T) {
			if path == "/mcp" {
				// JSON-RPC (the MCP SDK's streamable HTTP transport, behind
				// server/mcp's framing checks): a hostile body is a 4xx,
				// never a 5xx or a 200; a list is a JSON-RPC batch, which
				// the protocol allows.
				for _, tc := range testutil.HostileCases(`{"jsonrpc": "2.0", "id": 1, "method": "ping"}`, 4<<20) {
					req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(tc.Body)))
					req.Header.Set("Content-Type", cmp.Or(tc.ContentType, "application/json"))
					req.Header.Set("Accept", "application/json, text/event-stream")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if tc.Name == "list" {
						continue
					}
					if rec.Code < 400 || rec.Code >= 500 {
						t.Errorf("%s: %d %.200s, want a 4xx", tc.Name, rec.Code, rec.Body)
					}
				}
				return
			}
			if path == "/healthz" || path == "/metrics" || path == "/ui/" || path == "/health" { // GET only: a POST is a 405 with the JSON error
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"x": 1}]]]`)))
				testutil.CheckErrorShape(t, rec.Result(), http.StatusMethodNotAllowed)
				return
			}
			e, ok := eps[path]
			if !ok {
				t.Fatalf("serve answers %s but this test has no body for it", path)
			}
			testutil.CheckHostile(t, h, path, e.valid, e.limit)
		})
	}
	if got := len(srv.Paths()); got != 19 {
		t.Errorf("serve answers %d paths %v, want 19 (12 + the dialects' six + /mcp)", got, srv.Paths())
	}
}
