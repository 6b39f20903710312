package app

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

// TestFingerprintOnEveryAnswer: every answer (retrieval, programs,
// rewards, a 4xx, /healthz) carries the same X-Rlsearch-Fingerprint, and
// /healthz reports its parts.
func TestFingerprintOnEveryAnswer(t *testing.T) {
	svc, err := New(context.Background(), Config{Index: IndexConfig{Dir: tinyIndex(t)}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	fp := svc.Fingerprint.String()
	if !regexp.MustCompile(`^id=[0-9a-f]{16} build=[0-9a-f]{16} encoder=none dense=none reranker=none$`).MatchString(fp) {
		t.Fatalf("fingerprint %q: want id, build, encoder, dense and reranker", fp)
	}
	if svc.Fingerprint.BuildID != svc.Index.BuildID() {
		t.Errorf("fingerprint build %s, index build %s", svc.Fingerprint.BuildID, svc.Index.BuildID())
	}
	for _, c := range []struct{ path, body string }{
		{"/retrieve", `{"queries": ["capital of Germany"], "topk": 2}`},
		{"/retrieve", `{"queries": "not a list"}`},
		{"/v1/programs/execute", `{"programs": [{"code": "print(sparse(\"Berlin\", k=1))"}]}`},
		{"/v1/rewards/qa", `{"rollouts": [{"response": "<answer>Berlin</answer>", "golden_answers": ["Berlin"]}]}`},
		{"/healthz", ""},
		{"/no/such/path", ""},
	} {
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		if c.body != "" {
			req = httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		svc.Handler().ServeHTTP(rec, req)
		if got := rec.Header().Get(server.FingerprintHeader); got != fp {
			t.Errorf("%s %s (%d): %s %q, want %q", c.path, c.body, rec.Code, server.FingerprintHeader, got, fp)
		}
		if c.path == "/healthz" && !strings.Contains(rec.Body.String(), `"fingerprint":{"build_id":"`+svc.Index.BuildID()+`"`) {
			t.Errorf("/healthz: %s; want the fingerprint's parts", rec.Body)
		}
	}
}
