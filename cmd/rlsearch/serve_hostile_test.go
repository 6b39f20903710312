package main

import (
	"context"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
)

// TestServeHostileBodies sends the hostile bodies of testutil.HostileCases
// to every path `rlsearch serve` answers (without --reranker; /rerank is
// covered by server's TestHostileBodiesEveryEndpoint), each with
// its served body limit, and expects the same status and error JSON.
func TestServeHostileBodies(t *testing.T) {
	dir, _ := buildIndex(t)
	var s serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	s.bind(fs)
	if err := fs.Parse([]string{"--index", dir, "--max-body", "65536"}); err != nil {
		t.Fatal(err)
	}
	srv, _, closeAll, err := s.newServer(context.Background(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
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
	}
	for _, k := range reward.Kinds {
		eps["/v1/rewards/"+string(k)] = ep{`{"rollouts": []}`, reward.DefaultMaxBodyBytes}
	}
	for _, path := range srv.Paths() {
		t.Run(path, func(t *testing.T) {
			if path == "/healthz" || path == "/metrics" || path == "/ui/" { // GET only: a POST is a 405 with the JSON error
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
	if got := len(srv.Paths()); got != 12 {
		t.Errorf("serve answers %d paths %v, want 12", got, srv.Paths())
	}
}
