package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"golang.org/x/sync/errgroup"
)

// metaRequest is one request of the metamorphic mix.
type metaRequest struct {
	path, body string
}

// metaMix returns n seeded random requests: /retrieve on bm25 and e5 with
// topk from 1 to 1,000 (one to three queries), programs calling dense and
// sparse at random widths, and mutation searches.
func metaMix(seed uint64, n int, qs []string) []metaRequest {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	width := func() int {
		switch rng.IntN(4) {
		case 0:
			return 1 + rng.IntN(5)
		case 1:
			return 1 + rng.IntN(64)
		default:
			return 1 + rng.IntN(1000)
		}
	}
	q := func() string { return qs[rng.IntN(len(qs))] }
	var out []metaRequest
	for len(out) < n {
		switch r := rng.IntN(10); {
		case r < 6:
			queries := []string{q()}
			for rng.IntN(3) == 0 && len(queries) < 3 {
				queries = append(queries, q())
			}
			retr := []string{"bm25", "e5"}[rng.IntN(2)]
			b, _ := json.Marshal(map[string]any{"queries": queries, "topk": width(), "return_scores": true, "retriever": retr})
			out = append(out, metaRequest{"/retrieve", string(b)})
		case r < 9:
			fn := []string{"dense", "sparse"}[rng.IntN(2)]
			qq, _ := json.Marshal(q())
			code := fmt.Sprintf("hits = %s(%s, k=%d)\nprint(hits[:3])", fn, qq, width())
			if rng.IntN(2) == 0 {
				code = fmt.Sprintf("a = dense(%s, k=%d)\nb = sparse(%s, k=%d)\nprint(fuse([a, b])[:5])", qq, width(), qq, width())
			}
			b, _ := json.Marshal(map[string]any{"programs": []map[string]any{{"code": code}}})
			out = append(out, metaRequest{"/v1/programs/execute", string(b)})
		default:
			qq, _ := json.Marshal(q())
			text := fmt.Sprintf("<code>print(dense(%s, k=%d))</code>", qq, []int{3, 5, 10}[rng.IntN(3)])
			b, _ := json.Marshal(map[string]any{"trajectories": []map[string]any{{"question": q(), "gold_ids": []string{fmt.Sprintf("wiki-%06d", rng.IntN(1500))},
				"turns": []map[string]any{{"role": "model", "text": text}}}}, "executions": 8})
			out = append(out, metaRequest{"/v1/programs/mutate", string(b)})
		}
	}
	return out
}

func metaPost(tb testing.TB, h http.Handler, r metaRequest) []byte {
	tb.Helper()
	req := httptest.NewRequest(http.MethodPost, r.path, strings.NewReader(r.body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Errorf("%s %s: %d %s", r.path, r.body, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// TestMetamorphicLoad is the determinism contract (DESIGN.md) as a test:
// a seeded random mix of /retrieve (bm25 and e5, topk 1…1,000), programs
// and mutation searches is answered by a cold server one request at a
// time, then sent 32 at a time through a server with the e5 batching
// queue and the result cache (twice: cold cache, warm cache), then alone
// again through that warm server. Every answer must be byte-identical to
// the cold one, on exact flat search and on HNSW (efSearch 16, so that a
// batch-mate's width would change the beam), float32 and compressed
// (int8 traversal, fp16 re-rank: IndexConfig.HNSWCompressed), and on flat
// search through an int8 scan (IndexConfig.FlatInt8Scan).
func TestMetamorphicLoad(t *testing.T) {
	ctx := context.Background()
	model, dir := denseWikiIndex(t, 1500)
	var qs []string
	for _, q := range testutil.WikiQuestions(t)[:60] {
		qs = append(qs, q.Question)
	}
	mix := metaMix(34, 160, qs)
	for _, backend := range []string{"flat", "flat-int8scan", "hnsw", "hnsw-compressed", "hnsw-int8"} {
		t.Run(backend, func(t *testing.T) {
			ic := IndexConfig{Dir: dir, Model: model, DenseBackend: strings.Split(backend, "-")[0], HNSWEfSearch: 16,
				HNSWCompressed: strings.HasSuffix(backend, "-compressed"), FlatInt8Scan: strings.HasSuffix(backend, "-int8scan"), HNSWInt8: strings.HasSuffix(backend, "-int8")}
			open := func(cacheBytes int64) *Service {
				svc, err := New(ctx, Config{Index: ic, Logger: slog.New(slog.DiscardHandler), CacheBytes: cacheBytes, BatchMax: 512, BatchWait: 5 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return svc
			}
			cold := open(0)
			fp := cold.Fingerprint.String()
			if strings.HasPrefix(backend, "hnsw") && !strings.Contains(fp, "dense=hnsw(ef_search=16,") {
				t.Errorf("fingerprint %q: want the HNSW backend with ef_search 16", fp)
			}
			if c := strings.Contains(fp, "int8=true,rerank=fp16)"); c != (backend == "hnsw-compressed") {
				t.Errorf("fingerprint %q: names the compressed graph %v, want %v", fp, c, !c)
			}
			if c := strings.Contains(fp, ",int8=true)"); c != (backend == "hnsw-int8") {
				t.Errorf("fingerprint %q: names int8 traversal with in-memory re-rank %v, want %v", fp, c, !c)
			}
			if c := strings.Contains(fp, "dense=flat(int8scan=k+16)"); c != (backend == "flat-int8scan") {
				t.Errorf("fingerprint %q: names the int8 scan %v, want %v", fp, c, !c)
			}
			want := make([][]byte, len(mix))
			for i, r := range mix {
				want[i] = bytes.Clone(metaPost(t, cold.Handler(), r))
			}
			cold.Close()

			warm := open(64 << 20)
			defer warm.Close()
			if got := warm.Fingerprint.String(); got != fp {
				t.Errorf("fingerprint with the cache %q, without %q: the cache is not an answer-changing setting", got, fp)
			}
			diffs := 0
			check := func(phase string, i int, got []byte) {
				if !bytes.Equal(got, want[i]) {
					diffs++
					if diffs <= 3 {
						t.Errorf("%s: request %d %s %s:\n got %.400s\nwant %.400s", phase, i, mix[i].path, mix[i].body, got, want[i])
					}
				}
			}
			for round, phase := range []string{"concurrent, cold cache", "concurrent, warm cache"} {
				got := make([][]byte, len(mix))
				var g errgroup.Group
				g.SetLimit(32)
				for i, r := range mix {
					g.Go(func() error {
						// Reverse order on the second round: other batch-mates.
						j := i
						if round == 1 {
							j = len(mix) - 1 - i
							r = mix[j]
						}
						got[j] = bytes.Clone(metaPost(t, warm.Handler(), r))
						return nil
					})
				}
				g.Wait()
				for i := range mix {
					check(phase, i, got[i])
				}
			}
			for i, r := range mix {
				check("alone, warm cache", i, metaPost(t, warm.Handler(), r))
			}
			if diffs > 0 {
				t.Errorf("%d of %d answers differ from the cold server's", diffs, 3*len(mix))
			}
		})
	}
}
