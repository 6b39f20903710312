package sdk

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

// TestCallBudgetBeforeRetrieval (issue 25, item 7): the retrieval-call
// budget was checked after the retrieval ran, so the 17th call of a
// program still reached the retriever. Now the call over the cap fails
// first: the retriever sees exactly MaxCalls queries, and the stats count
// the calls that ran.
func TestCallBudgetBeforeRetrieval(t *testing.T) {
	ix := wikiIndex(t)
	cr := &countingRetriever{Retriever: ix.Retrievers()[rlsearch.RetrieverBM25]}
	rt := newRT(t, ix, Config{Retrievers: map[string]rlsearch.Retriever{rlsearch.RetrieverBM25: cr}})
	// 20 distinct queries (no memo hit), one call each; Run has no coalescer.
	res := rt.Run(context.Background(), Request{Code: "for i in range(20):\n    sparse(\"robin hood %d\" % i, k=1)"}, nil)
	if res.Code != CodeBudget || !strings.Contains(res.Observation, "call budget exceeded: 17 retrieval calls, the cap is 16") {
		t.Fatalf("got %s %q, want the 17th call refused", res.Code, res.Observation)
	}
	if n := cr.queries.Load(); n != DefaultMaxCalls {
		t.Errorf("the retriever was asked %d queries, want the cap %d (the 17th must not reach it)", n, DefaultMaxCalls)
	}
	if res.Stats.RetrievalCalls != DefaultMaxCalls {
		t.Errorf("stats.retrieval_calls %d, want %d (the calls that ran)", res.Stats.RetrievalCalls, DefaultMaxCalls)
	}
}

// TestScoreMemoRuntimeRunBatch (issue 25, item 7): withScoreMemo returned
// a Runtime with a nil slot channel, so a RunBatch on it blocked until its
// context ended and every program came back not started. It shares its
// parent's slots now.
func TestScoreMemoRuntimeRunBatch(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Reranker: &lexReranker{}})
	memo := rt.withScoreMemo()
	// The deadline bounds a regression (it would block until then); it is
	// not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reqs := []Request{
		{Code: `print(rerank("robin hood", sparse("robin hood", k=5), k=2))`},
		{Code: `print(sparse("film director", k=1))`},
	}
	for i, res := range memo.RunBatch(ctx, reqs, BatchOptions{}) {
		if res.Code != CodeOK || len(res.PrintedIDs) == 0 {
			t.Errorf("program %d: %s %q, want it run", i, res.Code, res.Observation)
		}
	}
	if cap(memo.slots) != cap(rt.slots) || memo.slots == nil {
		t.Errorf("memo runtime slots: cap %d (nil %v), want the parent's %d", cap(memo.slots), memo.slots == nil, cap(rt.slots))
	}
}
