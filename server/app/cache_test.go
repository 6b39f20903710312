package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

var wiki struct {
	once sync.Once
	dir  string
	qs   []string
	err  error
}

// wikiIndex builds the BM25 index of ../shared/data/wiki_multihop (18,175
// passages) once per test binary and returns it with the 763 questions.
func wikiIndex(tb testing.TB) (string, []string) {
	tb.Helper()
	data := filepath.Join(testutil.DataDir(tb), "wiki_multihop")
	wiki.once.Do(func() {
		dir, err := os.MkdirTemp("", "app-wiki-*")
		if err != nil {
			wiki.err = err
			return
		}
		wiki.dir = filepath.Join(dir, "ix")
		if _, wiki.err = index.Build(context.Background(), index.BuildConfig{Corpus: filepath.Join(data, "corpus.jsonl"), Dir: wiki.dir}); wiki.err != nil {
			return
		}
		for _, q := range testutil.WikiQuestions(tb) {
			wiki.qs = append(wiki.qs, q.Question)
		}
	})
	if wiki.err != nil {
		tb.Fatal(wiki.err)
	}
	return wiki.dir, wiki.qs
}

func post(tb testing.TB, h http.Handler, path, body string) []byte {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		tb.Fatalf("%s %s: %d %s", path, body, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// rollouts is the replay: for each question, a GRPO group of g rollouts
// sends it, as one request per rollout (one query, topk 3, scores), then
// as one batched request of the whole group; epochs repeats it all.
func replay(tb testing.TB, h http.Handler, qs []string, g, epochs int, each func(body []byte)) int {
	n := 0
	for e := 0; e < epochs; e++ {
		for _, q := range qs {
			one, _ := json.Marshal(map[string]any{"queries": []string{q}, "topk": 3, "return_scores": true})
			for r := 0; r < g; r++ {
				each(post(tb, h, "/retrieve", string(one)))
				n++
			}
			group := make([]string, g)
			for r := range group {
				group[r] = q
			}
			batch, _ := json.Marshal(map[string]any{"queries": group, "topk": 5})
			each(post(tb, h, "/retrieve", string(batch)))
			n++
		}
	}
	return n
}

// TestReplayIdentical replays the 763 wiki_multihop questions × 5
// rollouts (and the batched group request) through /retrieve with the
// result cache and without it: every response body must be identical
// byte for byte, the cache must answer all but the first lookup of each
// distinct analysed query, and /metrics and /healthz must show it. A
// program and a mutation search then reuse the cache's entries.
func TestReplayIdentical(t *testing.T) {
	dir, qs := wikiIndex(t)
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	plain, err := New(ctx, Config{Index: IndexConfig{Dir: dir}, Logger: logger, CacheBytes: rlsearch.Off})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.Cache != nil {
		t.Fatal("CacheBytes rlsearch.Off made a cache")
	}
	cached, err := New(ctx, Config{Index: IndexConfig{Dir: dir}, Logger: logger, CacheBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	var want [][]byte
	replay(t, plain.Handler(), qs, 5, 1, func(b []byte) { want = append(want, bytes.Clone(b)) })
	i := 0
	n := replay(t, cached.Handler(), qs, 5, 1, func(b []byte) {
		if !bytes.Equal(b, want[i]) {
			t.Fatalf("response %d differs with the cache:\n%s\nwithout:\n%s", i, b, want[i])
		}
		i++
	})
	if n != len(want) || n != 763*6 {
		t.Fatalf("%d responses with the cache, %d without; want %d", n, len(want), 763*6)
	}
	st := cached.Cache.Stats()
	// Each question: one miss at topk 3 and one at topk 5 (its group
	// request); questions sharing an analysed query share entries.
	if st.Misses > 2*763 || st.Hits+st.Shared < 4*763 || st.HitRatio() < 0.66 {
		t.Errorf("stats %+v (hit ratio %.3f): want at most %d misses and a hit ratio of at least 4/6", st, st.HitRatio(), 2*763)
	}
	t.Logf("replay of %d requests: %+v, hit ratio %.3f", n, st, st.HitRatio())
	rec := httptest.NewRecorder()
	cached.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, m := range []string{`rlsearch_cache_lookups_total{result="hit",retriever="bm25"}`, "rlsearch_cache_hit_ratio", "rlsearch_cache_bytes", "rlsearch_cache_max_bytes 6.7108864e+07"} {
		if !strings.Contains(rec.Body.String(), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	rec = httptest.NewRecorder()
	cached.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var health struct {
		Cache struct {
			MaxBytes int64   `json:"max_bytes"`
			Entries  int     `json:"entries"`
			HitRatio float64 `json:"hit_ratio"`
		} `json:"cache"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &health); err != nil || health.Cache.MaxBytes != 64<<20 || health.Cache.Entries != st.Entries {
		t.Errorf("/healthz cache %+v (%v): want max_bytes %d and %d entries", health.Cache, err, 64<<20, st.Entries)
	}

	// Programs and mutations search through the same cache: a program
	// whose sparse() call repeats a /retrieve query at the same k is a hit.
	before := cached.Cache.Stats()
	prog, _ := json.Marshal(map[string]any{"programs": []map[string]any{{"question": qs[0], "code": fmt.Sprintf("print(sparse(%q, k=3))", qs[0])}}})
	post(t, cached.Handler(), "/v1/programs/execute", string(prog))
	after := cached.Cache.Stats()
	if after.Hits != before.Hits+1 || after.Misses != before.Misses {
		t.Errorf("program sparse(q, k=3) after /retrieve of q at topk 3: stats %+v → %+v, want one more hit and no miss", before, after)
	}
	mut, _ := json.Marshal(map[string]any{"trajectories": []map[string]any{{"id": "t", "question": qs[1], "gold_ids": []string{"wiki-000001"},
		"turns": []map[string]any{{"role": "model", "text": fmt.Sprintf("<code>print(sparse(%q, k=3))</code>", qs[1])}}}}, "executions": 8})
	// The verifier retrieves each query once at the widest width its
	// mutations need, so a second rollout's identical mutate request is
	// answered from the cache.
	post(t, cached.Handler(), "/v1/programs/mutate", string(mut))
	first := cached.Cache.Stats()
	post(t, cached.Handler(), "/v1/programs/mutate", string(mut))
	if st := cached.Cache.Stats(); st.Misses != first.Misses || st.Hits <= first.Hits {
		t.Errorf("a repeated mutate request: stats %+v → %+v, want hits and no new miss", first, st)
	}
}

// BenchmarkReplay measures /retrieve requests/s over the 763 wiki_multihop
// questions × 5 rollouts (plus each group's batched request), in process
// (no sockets), with the result cache (--cache-bytes 64 MiB, warm after
// the first epoch) and without it, and reports the hit ratio.
func BenchmarkReplay(b *testing.B) {
	dir, qs := wikiIndex(b)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"cache=off", 0}, {"cache=64MiB", 64 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			svc, err := New(ctx, Config{Index: IndexConfig{Dir: dir}, Logger: slog.New(slog.DiscardHandler), CacheBytes: c.bytes})
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close()
			b.ResetTimer()
			start := time.Now()
			n := 0
			for i := 0; i < b.N; i++ {
				n += replay(b, svc.Handler(), qs, 5, 1, func([]byte) {})
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "requests/s")
			b.ReportMetric(svc.Cache.Stats().HitRatio(), "hit_ratio")
		})
	}
}

// TestReplayIdenticalDense is TestReplayIdentical's replay on the dense
// route: 1,000 wiki_multihop passages embedded by the generated tiny BERT
// (ONNX Runtime), the first 300 questions × 5 rollouts (fewer than the
// BM25 replay: uncached, every rollout is an encoder call) through
// /retrieve with "retriever": "e5", with the cache (exact query text as
// the key, the e5 batching queue behind it) and without: identical bodies.
func TestReplayIdenticalDense(t *testing.T) {
	ctx := context.Background()
	model, dir := denseWikiIndex(t, 1000)
	var qs []string
	for _, q := range testutil.WikiQuestions(t)[:300] {
		qs = append(qs, q.Question)
	}
	var want [][]byte
	for i, bytesLimit := range []int64{0, 64 << 20} {
		svc, err := New(ctx, Config{Index: IndexConfig{Dir: dir, Model: model}, Logger: slog.New(slog.DiscardHandler), CacheBytes: bytesLimit})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, q := range qs {
			body, _ := json.Marshal(map[string]any{"queries": []string{q}, "topk": 3, "return_scores": true, "retriever": "e5"})
			for r := 0; r < 5; r++ {
				got := post(t, svc.Handler(), "/retrieve", string(body))
				if i == 0 {
					want = append(want, bytes.Clone(got))
				} else if !bytes.Equal(got, want[n]) {
					svc.Close()
					t.Fatalf("response %d (%q) differs with the cache:\n%s\nwithout:\n%s", n, q, got, want[n])
				}
				n++
			}
		}
		if i == 1 {
			if st := svc.Cache.Stats(); st.Misses > uint64(len(qs)) || st.HitRatio() < 0.79 {
				t.Errorf("dense replay stats %+v: want at most one miss per question, hit ratio ≥ 0.8", st)
			}
		}
		svc.Close()
	}
}

// denseWikiIndex builds an index of the first n wiki_multihop passages with
// the generated tiny BERT as its E5 shard and returns the model's config
// and the index directory.
func denseWikiIndex(t *testing.T, n int) (embed.Config, string) {
	t.Helper()
	model := embed.Config{Dir: testutil.Model(t, "tiny"), ORTLib: testutil.ORTLib(t)}
	enc, err := embed.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(testutil.DataDir(t), "wiki_multihop", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(src), "\n", n+1)
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(corpus, []byte(strings.Join(lines[:n], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ix")
	_, err = index.Build(context.Background(), index.BuildConfig{Corpus: corpus, Dir: dir, Encoder: enc})
	enc.Close()
	if err != nil {
		t.Fatal(err)
	}
	return model, dir
}
