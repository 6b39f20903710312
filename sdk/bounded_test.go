package sdk

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

// TestBatchSizeDoesNotMatter runs 512 typical programs (dense + sparse,
// fused, reranked) in one batch and checks each observation against the
// program run alone: with bounded concurrency no program's time budget is
// spent queued behind the others. CoalesceWait is a minute, so the batch
// only finishes if the coalescer flushes when every executing program
// waits (it must count the executing programs, not the whole batch).
func TestBatchSizeDoesNotMatter(t *testing.T) {
	ix := denseIndex(t)
	pool := questionPool(t)
	const src = "d=fuse(dense(question,k=20),sparse(question,k=20)); print(rerank(question,d,k=3)[:2])"
	n := 512
	if testing.Short() {
		n = 128
	}
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ID: fmt.Sprint(i), Code: src, Question: pool[i%len(pool)]}
	}
	rt := newRT(t, ix, Config{Reranker: &lexReranker{}, CoalesceWait: time.Minute})
	got := rt.RunBatch(context.Background(), reqs, BatchOptions{})
	for i, r := range reqs {
		want := rt.Run(context.Background(), r, nil)
		if want.Code != CodeOK {
			t.Fatalf("program %d alone: %s %q", i, want.Code, want.Observation)
		}
		if got[i].Code != want.Code || got[i].Observation != want.Observation {
			t.Fatalf("program %d in a batch of %d: got %s %q, alone %s %q", i, n, got[i].Code, got[i].Observation, want.Code, want.Observation)
		}
	}
	if len(rt.slots) != 0 {
		t.Fatalf("%d concurrency slots still held after the batch", len(rt.slots))
	}
}

// inFlightRetriever records the most Retrieve calls running at once.
type inFlightRetriever struct {
	rlsearch.Retriever
	now, max atomic.Int64
}

func (r *inFlightRetriever) Retrieve(ctx context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	n := r.now.Add(1)
	defer r.now.Add(-1)
	for {
		m := r.max.Load()
		if n <= m || r.max.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond) // let other programs overlap this one
	return r.Retriever.Retrieve(ctx, qs, k)
}

// TestConcurrencyIsBoundedAcrossBatches runs concurrent batches without
// coalescing (one Retrieve per program call) and checks that no more than
// Config.MaxConcurrent programs of all of them were ever retrieving at once.
func TestConcurrencyIsBoundedAcrossBatches(t *testing.T) {
	ix := wikiIndex(t)
	r := &inFlightRetriever{Retriever: ix.Retrievers()["bm25"]}
	const limit = 3
	rt := newRT(t, ix, Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Reranker: stubReranker{}, MaxConcurrent: limit})
	reqs := typicalRequests(t, 40, []Mode{ModeSparse}, 5)
	var wg sync.WaitGroup
	for b := 0; b < 4; b++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, res := range rt.RunBatch(context.Background(), reqs, BatchOptions{NoCoalesce: true, NoMemo: true}) {
				if res.Code != CodeOK {
					t.Errorf("program %d: %s %q", i, res.Code, res.Observation)
				}
			}
		}()
	}
	wg.Wait()
	if m := r.max.Load(); m > limit {
		t.Fatalf("%d programs retrieved at once, want at most Config.MaxConcurrent = %d", m, limit)
	}
}

// TestUninterruptibleOperationIsAbandoned: 3 ** 5000000 (a 7.9 Mbit int)
// is one Go call of a few hundred milliseconds, charged ~2.4·10^8 steps,
// which the raised step budget admits (int() of a 700,000-digit string,
// the Starlark-era case, is now CPython's 4300-digit ValueError);
// the caller gets its
// budget_exceeded result without waiting for it, and the program keeps its
// concurrency slot until the step really ends.
func TestUninterruptibleOperationIsAbandoned(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{MaxConcurrent: 1, Budgets: Budgets{MaxSteps: 1 << 40, Timeout: 50 * time.Millisecond}})
	src := "print('before')\nx = 3 ** 5000000\nprint(x % 10)"
	res := rt.RunBatch(context.Background(), []Request{{ID: "big", Code: src}}, BatchOptions{})[0]
	if res.Code != CodeBudget || !strings.Contains(res.Error, "time budget of 50ms exceeded") || !strings.Contains(res.Error, "abandoned") || !strings.HasPrefix(res.Observation, "before\n") || res.ID != "big" {
		t.Fatalf("got %s %q (error %q), want budget_exceeded (time) after the printed \"before\"", res.Code, res.Observation, res.Error)
	}
	// The abandoned program ends on its own; then its slot is free again.
	for deadline := time.Now().Add(time.Minute); len(rt.slots) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned program never released its slot")
		}
	}
	if r := rt.RunBatch(context.Background(), []Request{{Code: "print(1)"}}, BatchOptions{})[0]; r.Code != CodeOK {
		t.Fatalf("after the abandoned program: %s %q", r.Code, r.Observation)
	}
}

// blockingReranker waits for its context and returns its error wrapped,
// as a model server client does.
type blockingReranker struct{ stubReranker }

func (blockingReranker) Rerank(ctx context.Context, _ string, _ []rlsearch.Document) ([]float32, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("rerank: post: %w", ctx.Err())
}

// TestPrimitiveContextErrors: a primitive that fails because the program's
// deadline passed (or its caller went away) is budget_exceeded (time) or
// cancelled, not internal_error.
func TestPrimitiveContextErrors(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Reranker: blockingReranker{}, Budgets: Budgets{Timeout: 50 * time.Millisecond}})
	src := `print(rerank("Robin Hood", sparse("Robin Hood", k=3)))`
	res := rt.Run(context.Background(), Request{Code: src}, nil)
	if res.Code != CodeBudget || !strings.Contains(res.Error, "time budget of 50ms exceeded") {
		t.Fatalf("deadline in rerank: got %s %q, want budget_exceeded (time)", res.Code, res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	res = rt.Run(ctx, Request{Code: src}, nil)
	if res.Code != CodeCancelled {
		t.Fatalf("cancel in rerank: got %s %q, want cancelled", res.Code, res.Error)
	}
	if _, err := rt.Rerank(ctx, "q", []Doc{{ID: "a", Contents: "\"a\"\nb"}}, 1); codeOf(err) != CodeCancelled {
		t.Fatalf("Runtime.Rerank with a cancelled context: %v (code %s), want cancelled", err, codeOf(err))
	}
}

// TestNULInSource: Starlark's scanner stops at NUL, so a program with one
// is a syntax error naming the offset instead of silently losing its tail.
func TestNULInSource(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	res := rt.Run(context.Background(), Request{Code: "print(1)\x00print(2)"}, nil)
	if res.Code != CodeSyntax || !strings.Contains(res.Error, "NUL byte at offset 8") || strings.Contains(res.Observation, "1\n") {
		t.Fatalf("got %s %q, want syntax_error naming offset 8 and nothing run", res.Code, res.Observation)
	}
	res = rt.Run(context.Background(), Request{Code: `print(len("a\x00b"))`}, nil)
	if res.Code != CodeOK || res.Observation != "3\n" {
		t.Fatalf("escaped NUL in a string: got %s %q, want ok \"3\\n\"", res.Code, res.Observation)
	}
}
