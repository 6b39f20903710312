package sdk

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

// blockingCorpus is a remote-like ContextCorpus whose fetches block until
// their context ends. Doc (no context) blocks until release is closed: a
// runtime that calls it cannot be stopped by its client.
type blockingCorpus struct {
	release          chan struct{}
	started          chan struct{} // one send per fetch that began
	inFlight, noCtx  atomic.Int64
	returnedOnCancel atomic.Int64
}

func newBlockingCorpus() *blockingCorpus {
	return &blockingCorpus{release: make(chan struct{}), started: make(chan struct{}, 64)}
}

func (c *blockingCorpus) Doc(row int32) (rlsearch.Document, error) {
	c.noCtx.Add(1)
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	c.started <- struct{}{}
	<-c.release
	return rlsearch.Document{}, errors.New("blockingCorpus: released")
}

func (c *blockingCorpus) DocContext(ctx context.Context, row int32) (rlsearch.Document, error) {
	c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	c.started <- struct{}{}
	select {
	case <-ctx.Done():
		c.returnedOnCancel.Add(1)
		return rlsearch.Document{}, ctx.Err()
	case <-c.release:
		return rlsearch.Document{}, errors.New("blockingCorpus: released")
	}
}

// TestDocFetchesHonourContext: a program's document fetches get its
// context, so when the client leaves (the request's ctx is cancelled) the
// blocked fetch returns, the program ends with code cancelled, and its
// goroutine is gone (no fetch outlives the request), with and without a
// shared Cache. Before, the runtime called Doc(row) without a context: the
// fetch, and the program's goroutine, stayed blocked after Run had answered.
func TestDocFetchesHonourContext(t *testing.T) {
	ix := wikiIndex(t)
	for _, withCache := range []bool{false, true} {
		name := "no cache"
		if withCache {
			name = "cache"
		}
		t.Run(name, func(t *testing.T) {
			corpus := newBlockingCorpus()
			defer close(corpus.release)
			rt := newRT(t, ix, Config{Docs: corpus})
			var cache *Cache
			if withCache {
				cache = NewCache()
			}
			ctx, cancel := context.WithCancel(context.Background())
			ended := make(chan struct{})
			resc := make(chan Result, 1)
			go func() {
				resc <- rt.exec(ctx, Request{Code: "print(sparse(question, k=3))", Question: "Who directed the 2018 film Robin Hood?"},
					directFetcher{cache: cache}, func() { close(ended) })
			}()
			select {
			case <-corpus.started:
			case <-time.After(time.Minute):
				t.Fatal("the program never fetched a document")
			}
			cancel()
			res := <-resc
			if res.Code != CodeCancelled {
				t.Fatalf("code %s (%s), want %s", res.Code, res.Error, CodeCancelled)
			}
			select {
			case <-ended:
			case <-time.After(30 * time.Second):
				t.Fatalf("the program's goroutine is still running 30 s after its client left (%d fetches in flight, %d without a context)",
					corpus.inFlight.Load(), corpus.noCtx.Load())
			}
			if n := corpus.noCtx.Load(); n != 0 || corpus.returnedOnCancel.Load() == 0 || corpus.inFlight.Load() != 0 {
				t.Fatalf("%d fetches without a context, %d returned on cancel, %d in flight", n, corpus.returnedOnCancel.Load(), corpus.inFlight.Load())
			}
		})
	}
}

// oneShotCorpus serves every row, except that the first fetch blocks
// until its context ends.
type oneShotCorpus struct {
	blocked chan struct{}
	once    sync.Once
	calls   atomic.Int64
}

func (c *oneShotCorpus) Doc(row int32) (rlsearch.Document, error) {
	return c.DocContext(context.Background(), row)
}

func (c *oneShotCorpus) DocContext(ctx context.Context, row int32) (rlsearch.Document, error) {
	c.calls.Add(1)
	first := false
	c.once.Do(func() { first = true })
	if first {
		close(c.blocked)
		<-ctx.Done()
		return rlsearch.Document{}, ctx.Err()
	}
	return rlsearch.Document{ID: "d", Contents: "\"T\"\nx"}, nil
}

// TestCacheDocOtherCallersCancel: a caller of Cache.doc that waited on
// another caller's fetch, which ended with that caller's cancellation,
// fetches again within its own context instead of returning an error that
// is not its own; the failed entry is not kept.
func TestCacheDocOtherCallersCancel(t *testing.T) {
	corpus := &oneShotCorpus{blocked: make(chan struct{})}
	c := NewCache()
	ctx1, cancel1 := context.WithCancel(context.Background())
	err1 := make(chan error, 1)
	go func() { _, err := c.doc(ctx1, corpus, 7); err1 <- err }()
	<-corpus.blocked
	got := make(chan error, 1)
	go func() {
		d, err := c.doc(context.Background(), corpus, 7)
		if err == nil && d.ID != "d" {
			err = errors.New("wrong document " + d.ID)
		}
		got <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the second caller wait on the first fetch (either order is correct)
	cancel1()
	if err := <-err1; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("other caller: %v, want the document", err)
	}
	if d, err := c.doc(context.Background(), corpus, 7); err != nil || d.ID != "d" {
		t.Fatalf("after: %v %v", d, err)
	}
	if _, err := c.doc(ctx1, corpus, 8); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "released") {
		t.Fatalf("an ended context fetches nothing: %v", err)
	}
}
