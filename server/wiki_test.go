package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/server"
)

var wikiIx struct {
	once sync.Once
	ix   *index.Index
	qs   []string
	err  error
}

// wikiServer builds the BM25 index of ../shared/data/wiki_multihop (18,175
// passages) once per test binary and serves it with the default limits.
func wikiServer(tb testing.TB) (*server.Server, []string) {
	tb.Helper()
	data := filepath.Join(testutil.DataDir(tb), "wiki_multihop")
	wikiIx.once.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "server-wiki-*")
		if err != nil {
			wikiIx.err = err
			return
		}
		ixDir := filepath.Join(dir, "ix")
		if _, err := index.Build(ctx, index.BuildConfig{Corpus: filepath.Join(data, "corpus.jsonl"), Dir: ixDir}); err != nil {
			wikiIx.err = err
			return
		}
		if wikiIx.ix, wikiIx.err = index.Open(ctx, ixDir, index.OpenConfig{}); wikiIx.err != nil {
			return
		}
		os.RemoveAll(dir) // the open index keeps its files mapped
		for _, q := range testutil.WikiQuestions(tb) {
			wikiIx.qs = append(wikiIx.qs, q.Question)
		}
	})
	if wikiIx.err != nil {
		tb.Fatal(wikiIx.err)
	}
	s, err := server.New(server.Config{Retrievers: wikiIx.ix.Retrievers(), Default: "bm25", Docs: wikiIx.ix,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return s, wikiIx.qs
}

// searchR1Body is a Search-R1 trainer's request: n queries (the wiki
// questions, repeated, each made distinct so that no deduplication helps)
// at topk k with scores.
func searchR1Body(qs []string, n, k int) []byte {
	batch := make([]string, n)
	for i := range batch {
		batch[i] = fmt.Sprintf("%s %d", qs[i%len(qs)], i/len(qs))
	}
	b, _ := json.Marshal(map[string]any{"queries": batch, "topk": k, "return_scores": true})
	return b
}

// peakHeap runs f while sampling runtime.MemStats.HeapInuse every 2 ms and
// returns the peak above the level before f (after a GC).
func peakHeap(f func()) (peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var top uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapInuse)
			select {
			case <-stop:
				done <- top
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	top := <-done
	if top < base {
		return 0
	}
	return top - base
}

// countingDiscard counts what the client reads, discarding it.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// serveWikiBatch sends one 16,384 × topk 10 request over loopback and
// returns the status, the response size and the peak heap growth of the
// process (server and client) while it ran.
func serveWikiBatch(tb testing.TB, s *server.Server, body []byte) (status int, size int64, peak uint64) {
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	var cd countingDiscard
	peak = peakHeap(func() {
		resp, err := http.Post(ts.URL+"/retrieve", "application/json", strings.NewReader(string(body)))
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		status = resp.StatusCode
		if _, err := io.Copy(&cd, resp.Body); err != nil {
			tb.Fatal(err)
		}
	})
	return status, cd.n, peak
}

// TestWikiSearchR1Batch sends what a large Search-R1 run sends, 16,384
// queries at topk 10 in one request, to the default server over the wiki
// BM25 index: 200, and the response (117 MB: 163,840 hits of ~700 bytes)
// streams rather than being built in memory (measured: 24 MB peak heap
// growth, client included, on a shared 2-core machine). The bound asserted
// is loose on purpose (the response size: a server that built it whole
// would hold at least that); BenchmarkWikiSearchR1Batch reports the peak.
func TestWikiSearchR1Batch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wiki_multihop index and searches 16,384 queries")
	}
	s, qs := wikiServer(t)
	body := searchR1Body(qs, 16384, 10)
	status, size, peak := serveWikiBatch(t, s, body)
	if status != 200 {
		t.Fatalf("16,384 queries × topk 10: status %d", status)
	}
	t.Logf("16,384 × topk 10: request %.1f MB, response %.1f MB, peak heap growth %.1f MB (server and client in one process)",
		float64(len(body))/1e6, float64(size)/1e6, float64(peak)/1e6)
	if int64(peak) >= size {
		t.Errorf("peak heap growth %d bytes ≥ the response's %d bytes: the response is held in memory rather than streamed", peak, size)
	}
}

// BenchmarkWikiSearchR1Batch reports the peak heap growth (peak-heap-MB)
// and the response size of one 16,384 × topk 10 request on the wiki BM25
// index, with default limits.
func BenchmarkWikiSearchR1Batch(b *testing.B) {
	s, qs := wikiServer(b)
	body := searchR1Body(qs, 16384, 10)
	var peak uint64
	var size int64
	for b.Loop() {
		status, n, p := serveWikiBatch(b, s, body)
		if status != 200 {
			b.Fatalf("status %d", status)
		}
		peak, size = max(peak, p), n
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(size)/1e6, "response-MB")
}
