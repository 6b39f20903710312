package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/cache"
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

// TestCacheFileWarmRestart: a cache saved by one service loads into a
// restarted service of the same fingerprint (answers from the cache, the
// same bytes), and a service over another build refuses it at start with
// a message naming both fingerprints.
func TestCacheFileWarmRestart(t *testing.T) {
	ctx := context.Background()
	dir := tinyIndex(t)
	file := filepath.Join(t.TempDir(), "cache.rlsc")
	open := func(dir, load string) (*Service, error) {
		return New(ctx, Config{Index: IndexConfig{Dir: dir}, Logger: slog.New(slog.DiscardHandler), CacheBytes: 1 << 20, CacheLoad: load})
	}
	a, err := open(dir, file) // missing file: cold start
	if err != nil {
		t.Fatal(err)
	}
	body := `{"queries": ["capital of Germany", "Paris"], "topk": 2, "return_scores": true}`
	want := post(t, a.Handler(), "/retrieve", body)
	if err := a.SaveCache(file); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := open(dir, file)
	if err != nil {
		t.Fatal(err)
	}
	if st := b.Cache.Stats(); st.Entries != 2 {
		t.Fatalf("restarted cache holds %d entries, want the 2 saved", st.Entries)
	}
	if got := post(t, b.Handler(), "/retrieve", body); !bytes.Equal(got, want) {
		t.Errorf("after the warm restart %s, before %s", got, want)
	}
	if st := b.Cache.Stats(); st.Hits != 2 || st.Misses != 0 {
		t.Errorf("warm restart stats %+v: want both queries answered from the loaded file", st)
	}
	b.Close()

	other := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(other, []byte(corpusText+`{"id": "p9", "contents": "\"Rome\"\nRome is the capital of Italy."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	odir := filepath.Join(t.TempDir(), "idx")
	if _, err := index.Build(ctx, index.BuildConfig{Corpus: other, Dir: odir}); err != nil {
		t.Fatal(err)
	}
	if c, err := open(odir, file); err == nil {
		c.Close()
		t.Fatal("a cache file of another build was loaded")
	} else if !errors.Is(err, cache.ErrFingerprint) || !strings.Contains(err.Error(), "another index build") {
		t.Errorf("loading another build's cache: %v; want cache.ErrFingerprint naming both fingerprints", err)
	}
}
