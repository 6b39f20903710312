package sdk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

// countingRetriever counts Retrieve calls and queries.
type countingRetriever struct {
	rlsearch.Retriever
	calls, queries atomic.Int64
	mu             sync.Mutex
	ks             []int
}

func (c *countingRetriever) Retrieve(ctx context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	c.calls.Add(1)
	c.queries.Add(int64(len(qs)))
	c.mu.Lock()
	c.ks = append(c.ks, k)
	c.mu.Unlock()
	return c.Retriever.Retrieve(ctx, qs, k)
}

// typicalRequests are n programs as rollouts of a few prompts write them:
// typed programs from a small query pool (so queries repeat) and a few
// free-form ones.
func typicalRequests(tb testing.TB, n int, modes []Mode, seed uint64) []Request {
	rng := rand.New(rand.NewPCG(seed, 2))
	pool := questionPool(tb)
	reqs := make([]Request, n)
	for i := range reqs {
		p := randomProgram(rng, pool, modes)
		p.Print = min(p.Print, 5)
		src := p.Source()
		if i%8 == 7 {
			src = fmt.Sprintf("docs = []\nfor q in [%q, question]:\n    docs.append(sparse(q, k=%d))\nbest = fuse(docs)\nprint(best[:3])\nprint(\"kept\", len(best))\n", pool[i%len(pool)], Widths[i%len(Widths)])
		}
		reqs[i] = Request{ID: fmt.Sprint(i), Code: src, Question: pool[(i*7)%len(pool)]}
	}
	return reqs
}

func TestBatchEqualsOneByOne(t *testing.T) {
	ix := wikiIndex(t)
	inner := ix.Retrievers()["bm25"]
	reqs := typicalRequests(t, 120, []Mode{ModeSparse}, 3)
	plain := newRT(t, ix, Config{Reranker: stubReranker{}})
	want := make([]Result, len(reqs))
	for i, r := range reqs {
		want[i] = plain.Run(context.Background(), r, nil)
		if want[i].Code != CodeOK && want[i].Code != CodeBudget {
			t.Fatalf("program %d: %s %s\n%s", i, want[i].Code, want[i].Error, r.Code)
		}
	}
	for _, opt := range []BatchOptions{{}, {NoCoalesce: true}, {NoMemo: true}, {Concurrency: 3}} {
		t.Run(fmt.Sprintf("%+v", opt), func(t *testing.T) {
			cr := &countingRetriever{Retriever: inner}
			// A long CoalesceWait makes flushes depend only on program
			// progress (all waiting, or MaxBatch queued), not on timing.
			// MaxConcurrent above the batch size lets every program run
			// at once, so that batches are as large as they can be.
			rt := newRT(t, ix, Config{Retrievers: map[string]rlsearch.Retriever{"bm25": cr}, Reranker: stubReranker{}, CoalesceWait: time.Minute, MaxConcurrent: 256})
			got := rt.RunBatch(context.Background(), reqs, opt)
			for i := range got {
				g, w := got[i], want[i]
				if g.ID != reqs[i].ID || g.Observation != w.Observation || !slices.Equal(g.PrintedIDs, w.PrintedIDs) || g.Code != w.Code || g.Stats != w.Stats {
					t.Fatalf("program %d differs:\nbatch %+v\nalone %+v", i, g, w)
				}
			}
			calls := 0
			for _, r := range want {
				calls += r.Stats.RetrievalCalls
			}
			t.Logf("%d programs, %d retrieval calls in programs -> %d Retrieve calls, %d queries", len(reqs), calls, cr.calls.Load(), cr.queries.Load())
			switch {
			case opt.NoMemo:
				if cr.queries.Load() != int64(calls) {
					t.Fatalf("without memo: %d queries retrieved, want one per call (%d)", cr.queries.Load(), calls)
				}
			case opt.NoCoalesce:
				if cr.calls.Load() != cr.queries.Load() || cr.queries.Load() >= int64(calls) {
					t.Fatalf("memo without coalescing: %d calls, %d queries for %d program calls", cr.calls.Load(), cr.queries.Load(), calls)
				}
			case opt.Concurrency > 0:
				if cr.calls.Load() > cr.queries.Load() || cr.queries.Load() >= int64(calls) {
					t.Fatalf("coalescing with 3 programs at a time: %d calls, %d queries", cr.calls.Load(), cr.queries.Load())
				}
			default:
				if cr.calls.Load()*4 > cr.queries.Load() {
					t.Fatalf("coalescing: %d Retrieve calls for %d queries; want batches of 4+ on average", cr.calls.Load(), cr.queries.Load())
				}
			}
		})
	}
}

func TestBatchDense(t *testing.T) {
	ix := denseIndex(t)
	reqs := typicalRequests(t, 24, []Mode{ModeDense, ModeFuse}, 5)
	rt := newRT(t, ix, Config{Reranker: &lexReranker{}})
	got := rt.RunBatch(context.Background(), reqs, BatchOptions{})
	for i, r := range reqs {
		w := rt.Run(context.Background(), r, nil)
		if got[i].Observation != w.Observation || got[i].Code != w.Code {
			t.Fatalf("program %d: batch %s %q, alone %s %q", i, got[i].Code, got[i].Observation, w.Code, w.Observation)
		}
	}
}

func TestCachePrefix(t *testing.T) {
	ix := wikiIndex(t)
	r := ix.Retrievers()["bm25"]
	ctx := context.Background()
	c := NewCache()
	for _, q := range []string{"Robin Hood film", "zzqx unmatched", "American Western film 1943"} {
		wide, err := r.Retrieve(ctx, []string{q}, 50)
		if err != nil {
			t.Fatal(err)
		}
		c.Put("bm25", q, 50, wide[0])
		for _, k := range []int{1, 3, 5, 10, 20, 49, 50} {
			got, ok := c.Get("bm25", q, k)
			direct, _ := r.Retrieve(ctx, []string{q}, k)
			if !ok || !slices.Equal(got, direct[0]) {
				t.Fatalf("%q k=%d: cached %v (ok %v), direct %v", q, k, got, ok, direct[0])
			}
		}
		if _, ok := c.Get("bm25", q, 51); ok && len(wide[0]) == 50 {
			t.Fatalf("%q: width 51 answered from a width-50 entry", q)
		}
	}
	// A short list (fewer matches than asked) answers every width.
	c.Put("bm25", "short", 10, []rlsearch.Hit{{Row: 1, Score: 1}})
	if h, ok := c.Get("bm25", "short", 50); !ok || len(h) != 1 {
		t.Fatalf("short entry: %v %v", h, ok)
	}
	// A narrower Put never replaces a wider entry.
	c.Put("bm25", "Robin Hood film", 3, nil)
	if h, ok := c.Get("bm25", "Robin Hood film", 20); !ok || len(h) != 20 {
		t.Fatalf("wider entry lost: %d %v", len(h), ok)
	}
}
