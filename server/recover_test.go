package server

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/recovered"
)

// TestBatcherRecoversPanic: a panic in the batcher's retriever call
// becomes each caller's error (wrapping recovered.ErrPanic, answered 500
// by classify), counted; the batcher keeps serving.
func TestBatcherPanicCounted(t *testing.T) {
	b := NewBatcher(&countingRetriever{}, 8, time.Millisecond)
	defer b.(io.Closer).Close()
	recovered.SetHook(func(where string) {
		if where == "batcher" {
			panic("injected")
		}
	})
	defer recovered.SetHook(nil)
	before := recovered.Count("batcher")
	_, err := b.Retrieve(context.Background(), []string{"paris"}, 3)
	if !errors.Is(err, recovered.ErrPanic) {
		t.Fatalf("err %v, want recovered.ErrPanic", err)
	}
	if st, kind, _ := classify(err, context.Background()); st != 500 || kind != kindPanic {
		t.Errorf("classified %d %s, want 500 %s", st, kind, kindPanic)
	}
	if d := recovered.Count("batcher") - before; d != 1 {
		t.Errorf("counter +%v, want +1", d)
	}
	recovered.SetHook(nil)
	if _, err := b.Retrieve(context.Background(), []string{"paris"}, 3); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}
