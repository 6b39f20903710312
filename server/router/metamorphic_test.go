package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/server/app"
	"golang.org/x/sync/errgroup"
)

// TestRouterMetamorphicLoad is server/app's TestMetamorphicLoad through
// the router: a seeded mix of /retrieve (bm25 and exact flat e5, topk 1 to
// 1,000, one to three queries) and programs, answered by one unsharded
// server one request at a time, then sent 32 at a time through a router
// over two shards (their result caches and batching queues on), then
// alone again (warm caches): every answer byte-identical. HNSW is not
// here: per-shard graphs are other graphs than the unsharded one's.
func TestRouterMetamorphicLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a dense index and two shards")
	}
	data := testutil.DataDir(t)
	mc := embed.Config{Dir: testutil.Model(t, "tiny"), ORTLib: testutil.ORTLib(t), MaxLength: 128, Sessions: 1, IntraOpThreads: 1}
	ctx := context.Background()
	src, err := os.ReadFile(filepath.Join(data, "wiki_multihop", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	lines := strings.SplitAfterN(string(src), "\n", 1201)
	corpusPath := filepath.Join(tmp, "corpus.jsonl")
	if err := os.WriteFile(corpusPath, []byte(strings.Join(lines[:1200], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	one, shards, m := buildDenseOneAndShards(t, ctx, corpusPath, mc, 2)

	cold := startIndex(t, one, app.Config{Index: app.IndexConfig{Model: mc, DenseBackend: "flat"}})
	set := startShards(t, shards, m, []int{1, 1}, app.Config{Index: app.IndexConfig{Model: mc, DenseBackend: "flat"}, CacheBytes: 64 << 20, BatchMax: 512, BatchWait: 5 * time.Millisecond})
	rc := fastRouter(set.urls())
	rc.ShardTimeout = 5 * time.Minute
	rt, _ := startRouter(t, rc, app.RouterConfig{})

	var qs []string
	for _, q := range loadQuestions(t, filepath.Join(data, "wiki_multihop", "questions.jsonl"))[:50] {
		qs = append(qs, q.Question)
	}
	rng := rand.New(rand.NewPCG(34, 2))
	width := func() int {
		if rng.IntN(2) == 0 {
			return 1 + rng.IntN(10)
		}
		return 1 + rng.IntN(1000)
	}
	type req struct{ path, body string }
	var mix []req
	for range 120 {
		q, _ := json.Marshal(qs[rng.IntN(len(qs))])
		switch rng.IntN(3) {
		case 0, 1:
			queries := []string{qs[rng.IntN(len(qs))]}
			if rng.IntN(3) == 0 {
				queries = append(queries, qs[rng.IntN(len(qs))])
			}
			mix = append(mix, req{"/retrieve", retrieveBody(queries, width(), []string{"bm25", "e5"}[rng.IntN(2)])})
		default:
			code := fmt.Sprintf("a = dense(%s, k=%d)\nb = sparse(%s, k=%d)\nprint(fuse([a, b])[:5])", q, width(), q, width())
			b, _ := json.Marshal(map[string]any{"programs": []map[string]any{{"code": code}}})
			mix = append(mix, req{"/v1/programs/execute", string(b)})
		}
	}
	c := &http.Client{}
	want := make([][]byte, len(mix))
	for i, r := range mix {
		code, _, body := post(t, c, cold.url(), r.path, r.body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", r.path, r.body, code, body)
		}
		want[i] = body
	}
	diffs := 0
	check := func(phase string, i int, code int, got []byte) {
		if code != http.StatusOK || !bytes.Equal(got, want[i]) {
			diffs++
			if diffs <= 3 {
				t.Errorf("%s: request %d %s %s: %d\n got %.300s\nwant %.300s", phase, i, mix[i].path, mix[i].body, code, got, want[i])
			}
		}
	}
	got := make([][]byte, len(mix))
	codes := make([]int, len(mix))
	var shed atomic.Int64
	var g errgroup.Group
	g.SetLimit(32)
	for i, r := range mix {
		g.Go(func() error {
			codes[i], got[i] = postShed(t, c, rt.url(), r.path, r.body, &shed)
			return nil
		})
	}
	g.Wait()
	for i := range mix {
		check("router, concurrent", i, codes[i], got[i])
	}
	for i, r := range mix {
		code, body := postShed(t, c, rt.url(), r.path, r.body, &shed)
		check("router, alone, warm shard caches", i, code, body)
	}
	if n := shed.Load(); n > 0 {
		t.Logf("%d requests shed with 503 + Retry-After (admission control on a loaded machine) and retried", n)
	}
	if diffs > 0 {
		t.Errorf("%d of %d answers through the router differ from the unsharded server's", diffs, 2*len(mix))
	}
}

// postShed posts like post, but retries a 503 that carries Retry-After
// (a request shed by admission control: what verl's and SkyRL's clients
// retry) after the time it names, for up to two minutes, counting the
// retries in shed. Shedding is not an answer: the contract is about the
// bytes of the answer a request finally gets.
func postShed(t testing.TB, c *http.Client, url, path, body string, shed *atomic.Int64) (int, []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, h, b := post(t, c, url, path, body)
		ra := h.Get("Retry-After")
		if code != http.StatusServiceUnavailable || ra == "" || time.Now().After(deadline) {
			return code, b
		}
		shed.Add(1)
		secs, err := strconv.Atoi(ra)
		if err != nil || secs < 0 {
			t.Errorf("Retry-After %q is not a number of seconds", ra)
			return code, b
		}
		time.Sleep(time.Duration(secs) * time.Second)
	}
}
