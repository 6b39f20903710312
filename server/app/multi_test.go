package app

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
)

// twoCorpora builds two BM25 indexes from the shared wiki_multihop corpus:
// "wiki", its first 1,500 passages, and "musique", the first 1,000 of its
// MuSiQue passages (the two overlap, as StepSearch's training and test
// corpora do).
func twoCorpora(t *testing.T) (wiki, musique string) {
	t.Helper()
	src := filepath.Join(corpus.DataDir(), "wiki_multihop", "corpus.jsonl")
	f, err := os.Open(src)
	if os.IsNotExist(err) {
		if os.Getenv("RLSEARCH_REQUIRE_NATIVE") == "1" {
			t.Fatalf("%s missing", src)
		}
		t.Skipf("%s missing (set RLSEARCH_DATA)", src)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tmp := t.TempDir()
	var w, m strings.Builder
	nw, nm := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && (nw < 1500 || nm < 1000) {
		var line struct{ Source string }
		json.Unmarshal(sc.Bytes(), &line)
		if nw < 1500 {
			w.WriteString(sc.Text() + "\n")
			nw++
		}
		if line.Source == "musique" && nm < 1000 {
			m.WriteString(sc.Text() + "\n")
			nm++
		}
	}
	build := func(name, text string) string {
		c := filepath.Join(tmp, name+".jsonl")
		if err := os.WriteFile(c, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, name)
		if _, err := index.Build(context.Background(), index.BuildConfig{Corpus: c, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return build("wiki", w.String()), build("musique", m.String())
}

// TestTwoCorporaAnswerAsTwoServers: one process serving two corpora
// answers, byte for byte, what two single-corpus servers answer: under
// /c/NAME/, at the root for the default corpus, on a listener of either
// corpus, and for programs and rewards that name their corpus in the body.
func TestTwoCorporaAnswerAsTwoServers(t *testing.T) {
	wiki, musique := twoCorpora(t)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	m, err := NewMulti(ctx, Config{Logger: quiet}, []Corpus{{Name: "wiki", Dir: wiki}, {Name: "musique", Dir: musique}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	single := map[string]*Service{}
	for name, dir := range map[string]string{"wiki": wiki, "musique": musique} {
		svc, err := New(ctx, Config{Index: IndexConfig{Dir: dir}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		single[name] = svc
	}
	root, err := m.Corpora.Handler(server.ProfileSearchR1, "")
	if err != nil {
		t.Fatal(err)
	}
	musiqueListener, err := m.Corpora.Handler(server.ProfileSearchR1, "musique")
	if err != nil {
		t.Fatal(err)
	}
	requests := []struct{ path, body string }{
		{"/retrieve", `{"queries": ["who directed the informant", "capital of the country where the Nile ends", "  "], "topk": 5, "return_scores": true}`},
		{"/retrieve", `{"query": "Al-Qaeda founder", "topk": 3, "return_scores": true}`},
		{"/retrieve", `{"query": "Al-Qaeda founder", "top_k": 4}`},
		{"/queries", `{"queries": ["Korean War armistice"], "k": 2}`},
		{"/search", `{"query": "Korean War", "top_n": 3, "return_score": true}`},
		{"/access", `{"urls": ["https://en.wikipedia.org/wiki/Korean_War", "https://en.wikipedia.org/wiki/Al-Qaeda"], "max_bytes": 4096}`},
		{"/v1/programs/execute", `{"programs": [{"id": "a", "question": "Korean War", "code": "print(sparse(question, k=3))"}]}`},
		{"/v1/rewards/retrieval", `{"rollouts": [{"id": "r", "response": "<answer>Korean War armistice</answer>", "gold_ids": ["wiki-000001"], "k": 5}]}`},
	}
	call := func(h http.Handler, path, body string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		if rec.Code != 200 {
			t.Fatalf("%s %s: %d %s", path, body, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	withCorpus := func(body, name string) string { return `{"corpus": "` + name + `", ` + strings.TrimPrefix(body, "{") }
	for _, rq := range requests {
		for _, name := range []string{"wiki", "musique"} {
			want := call(single[name].Handler(), rq.path, rq.body)
			if got := call(root, "/c/"+name+rq.path, rq.body); got != want {
				t.Errorf("/c/%s%s differs from a server of %s alone:\n got %.300s\nwant %.300s", name, rq.path, name, got, want)
			}
			if strings.HasPrefix(rq.path, "/v1/") {
				if got := call(root, rq.path, withCorpus(rq.body, name)); got != want {
					t.Errorf("%s with \"corpus\": %q differs:\n got %.300s\nwant %.300s", rq.path, name, got, want)
				}
			}
		}
		if got, want := call(root, rq.path, rq.body), call(single["wiki"].Handler(), rq.path, rq.body); got != want {
			t.Errorf("%s at the root differs from the default corpus's server:\n got %.300s\nwant %.300s", rq.path, got, want)
		}
		if got, want := call(musiqueListener, rq.path, rq.body), call(single["musique"].Handler(), rq.path, rq.body); got != want {
			t.Errorf("%s on a musique listener differs from musique's server:\n got %.300s\nwant %.300s", rq.path, got, want)
		}
	}
	// Routing errors name what is wrong.
	for _, tc := range []struct {
		path, body string
		status     int
		field, msg string
	}{
		{"/c/nope/retrieve", `{"queries": ["a"]}`, 404, "", "the corpora are wiki, musique"},
		{"/v1/programs/execute", `{"corpus": "nope", "code": "print(1)"}`, 400, "corpus", "unknown corpus"},
		{"/c/wiki/v1/programs/execute", `{"corpus": "musique", "code": "print(1)"}`, 400, "corpus", "the path names corpus"},
		{"/v1/rewards/qa", `{"corpus": 3, "rollouts": []}`, 400, "corpus", "must be a string"},
	} {
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body)))
		var e struct{ Error, Field string }
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != tc.status || e.Field != tc.field || !strings.Contains(e.Error, tc.msg) {
			t.Errorf("%s %s: %d %s, want %d naming %q with %q", tc.path, tc.body, rec.Code, rec.Body, tc.status, tc.field, tc.msg)
		}
	}
	// /healthz and /metrics per corpus.
	for _, name := range []string{"wiki", "musique"} {
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/c/"+name+"/healthz", nil))
		var h struct {
			NumDocs int `json:"num_docs"`
			Corpus  struct {
				Name         string  `json:"name"`
				StartSeconds float64 `json:"start_seconds"`
			} `json:"corpus"`
		}
		json.Unmarshal(rec.Body.Bytes(), &h)
		if h.Corpus.Name != name || h.NumDocs != single[name].Index.Len() || h.Corpus.StartSeconds <= 0 {
			t.Errorf("/c/%s/healthz: %s", name, rec.Body)
		}
		rec = httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/c/"+name+"/metrics", nil))
		if !strings.Contains(rec.Body.String(), `rlsearch_http_requests_total{code="200",endpoint="/queries"}`) {
			t.Errorf("/c/%s/metrics does not count that corpus's requests", name)
		}
	}
}

func TestNewMultiErrors(t *testing.T) {
	dir := tinyIndex(t)
	for _, cs := range [][]Corpus{{}, {{Name: "a b", Dir: dir}}, {{Name: "x", Dir: dir}, {Name: "x", Dir: dir}}} {
		m, err := NewMulti(context.Background(), Config{Logger: slog.New(slog.DiscardHandler)}, cs)
		if err == nil {
			m.Close()
			t.Errorf("%v: no error", cs)
		}
	}
}
