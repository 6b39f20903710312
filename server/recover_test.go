package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
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

// TestAdmissionControl: with MaxInFlight 1 and the slot held, 8 requests
// wait (answered 503 with Retry-After after ≤ ~1 s), the next is refused
// at once; /healthz is exempt; once the slot frees, requests succeed.
func TestAdmissionControl(t *testing.T) {
	under := &countingRetriever{block: make(chan struct{}), enter: make(chan struct{}, 1)}
	s, _ := newTestServer(t, func(c *Config) {
		c.Retrievers = map[string]rlsearch.Retriever{"bm25": under}
		c.MaxInFlight = 1
	})
	h := s.Handler()
	body := `{"queries": ["paris"], "topk": 2}`
	held := make(chan int, 1)
	go func() { code, _, _ := do(t, h, "POST", "/retrieve", body); held <- code }()
	<-under.enter
	var wg sync.WaitGroup
	codes := make(chan int, admissionQueue)
	start := time.Now()
	for range admissionQueue {
		wg.Add(1)
		go func() { defer wg.Done(); code, _, _ := do(t, h, "POST", "/retrieve", body); codes <- code }()
	}
	for s.waiting.Load() < admissionQueue {
		time.Sleep(time.Millisecond)
	}
	t0 := time.Now()
	code, hdr, resp := do(t, h, "POST", "/retrieve", body)
	if code != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(resp, "--max-inflight") || time.Since(t0) > 100*time.Millisecond {
		t.Errorf("beyond the queue: %d %q %s after %v, want a fast 503 with Retry-After naming --max-inflight", code, hdr.Get("Retry-After"), resp, time.Since(t0))
	}
	if code, _, _ := do(t, h, "GET", "/healthz", ""); code != 200 {
		t.Errorf("/healthz under load: %d", code)
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 503 {
			t.Errorf("a waiter got %d, want 503 after the wait", c)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("waiters answered after %v, want ≈ 1 s", d)
	}
	close(under.block)
	if c := <-held; c != 200 {
		t.Errorf("the admitted request: %d", c)
	}
	under.enter = nil
	if code, _, resp := do(t, h, "POST", "/retrieve", body); code != 200 {
		t.Errorf("after the burst: %d %s", code, resp)
	}
}

// TestDrain: Drain reports false while a handler runs (the index owner
// must then leave the index open) and true once it returned.
func TestDrain(t *testing.T) {
	under := &countingRetriever{block: make(chan struct{}), enter: make(chan struct{}, 1)}
	s, _ := newTestServer(t, func(c *Config) { c.Retrievers = map[string]rlsearch.Retriever{"bm25": under} })
	done := make(chan struct{})
	go func() { do(t, s.Handler(), "POST", "/retrieve", `{"queries": ["paris"]}`); close(done) }()
	<-under.enter
	if s.Drain(50*time.Millisecond) || s.Busy() != 1 {
		t.Fatalf("Drain true with a handler running (busy %d)", s.Busy())
	}
	close(under.block)
	if !s.Drain(time.Second) {
		t.Fatal("Drain false after the handler returned")
	}
	<-done
}
