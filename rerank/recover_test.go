package rerank

import (
	"context"
	"errors"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/recovered"
)

type constReranker struct{}

func (constReranker) Name() string { return "const" }
func (constReranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	return make([]float32, len(docs)), nil
}

// TestRerankListsRecoversPanic: a panic in a per-query rerank goroutine
// becomes the call's error (wrapping recovered.ErrPanic) and is counted;
// the process lives on.
func TestRerankListsRecoversPanic(t *testing.T) {
	recovered.SetHook(func(where string) {
		if where == "rerank" {
			panic("injected")
		}
	})
	defer recovered.SetHook(nil)
	before := recovered.Count("rerank")
	docs := [][]rlsearch.Document{{{ID: "a", Contents: "x"}}, {{ID: "b", Contents: "y"}}}
	_, err := RerankLists(context.Background(), constReranker{}, []string{"q1", "q2"}, docs, 1)
	if !errors.Is(err, recovered.ErrPanic) {
		t.Fatalf("err %v, want recovered.ErrPanic", err)
	}
	if d := recovered.Count("rerank") - before; d != 2 {
		t.Errorf("counter +%v, want +2", d)
	}
	recovered.SetHook(nil)
	if _, err := RerankLists(context.Background(), constReranker{}, []string{"q1", "q2"}, docs, 1); err != nil {
		t.Fatalf("after the panics: %v", err)
	}
}
