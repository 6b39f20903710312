package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/batch"
	"github.com/rlsearch/rlsearch/internal/recovered"
)

// ErrBatcherClosed is returned by a Batcher's Retrieve after Close.
var ErrBatcherClosed = errors.New("server: batcher closed")

// Batcher merges concurrent Retrieve calls into batched calls of an
// underlying retriever, for retrievers whose cost is dominated by a fixed
// per-call overhead (the E5 encoder on a GPU: one kernel launch and one
// cgo crossing per batch).
//
// One owner goroutine collects calls until they hold maxBatch queries or
// maxWait has passed since the first of them arrived, then answers all
// their queries in one underlying call with every query at its own
// caller's k (rlsearch.RetrieveWidths: the dense retriever embeds the
// whole batch at once and searches each query with its own width; an
// exact retriever is asked once at the largest k and each list cut; any
// other retriever gets one call per distinct k). Underlying calls run one
// at a time, in the owner goroutine; calls that arrive meanwhile form the
// next batch. A single call with more than maxBatch queries is run alone,
// in chunks of maxBatch.
//
// Every answer is therefore the one a call alone would get, on
// approximate backends too (HNSW, whose candidate list grows with k):
// batch-mates never change an answer (the determinism contract,
// server/README.md).
//
// A Batcher is safe for concurrent use. Close stops it.
type Batcher struct {
	r        rlsearch.Retriever
	maxBatch int
	maxWait  time.Duration

	reqs      chan *batchCall
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	calls     atomic.Int64 // underlying Retrieve calls, for tests and stats
}

// batchCall is one caller's request waiting in the batcher.
type batchCall struct {
	ctx     context.Context
	queries []string
	k       int
	arrived time.Time
	resp    chan batchResult // buffered 1: the owner never blocks on it
}

type batchResult struct {
	lists [][]rlsearch.Hit
	err   error
}

// NewBatcher returns a Retriever that batches concurrent calls to r: up to
// maxBatch queries per underlying call (values < 1 mean 1), flushed when
// full or maxWait after the first waiting call arrived (values ≤ 0 mean no
// waiting: a batch holds whatever calls queued up while the previous
// underlying call ran). The result is a *Batcher; stop it with Close
// (reachable through io.Closer) once no more calls will come.
//
// Name returns r's name.
func NewBatcher(r rlsearch.Retriever, maxBatch int, maxWait time.Duration) rlsearch.Retriever {
	if maxBatch < 1 {
		maxBatch = 1
	}
	b := &Batcher{
		r:        r,
		maxBatch: maxBatch,
		maxWait:  maxWait,
		reqs:     make(chan *batchCall),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.loop()
	return b
}

// Name returns the underlying retriever's name.
func (b *Batcher) Name() string { return b.r.Name() }

// Unwrap returns the underlying retriever (rlsearch.PrefixStable looks
// through it).
func (b *Batcher) Unwrap() rlsearch.Retriever { return b.r }

// Calls returns the number of underlying Retrieve calls so far.
func (b *Batcher) Calls() int64 { return b.calls.Load() }

// Retrieve queues the queries and waits for their batch. It returns
// ctx.Err() as soon as ctx is done (the batch still runs for the other
// callers in it; it is cancelled only when all of them are gone),
// ErrBatcherClosed after Close, and otherwise the result of the merged
// call: every caller in a failed batch gets its error. The returned lists
// are owned by the caller.
func (b *Batcher) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k < 1 || len(queries) == 0 {
		// Nothing to batch; let the underlying retriever define k ≤ 0.
		if len(queries) == 0 {
			return [][]rlsearch.Hit{}, nil
		}
		return b.r.Retrieve(ctx, queries, k)
	}
	c := &batchCall{ctx: ctx, queries: queries, k: k, arrived: time.Now(), resp: make(chan batchResult, 1)}
	select {
	case b.reqs <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.quit:
		return nil, ErrBatcherClosed
	}
	select {
	case res := <-c.resp:
		return res.lists, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops accepting calls, runs the batch already collected, and
// waits for the owner goroutine to exit. Calls waiting to enter the queue
// get ErrBatcherClosed. Close is idempotent and returns nil; it does not
// close the underlying retriever.
func (b *Batcher) Close() error {
	b.closeOnce.Do(func() { close(b.quit) })
	<-b.done
	return nil
}

// loop is the owner goroutine: internal/batch gathers calls (carrying one
// that would overflow maxBatch queries to the next batch; on Close the
// batch being gathered runs, then the carried call).
func (b *Batcher) loop() {
	defer close(b.done)
	batch.New(b.reqs, batch.Config[*batchCall]{
		Max:     b.maxBatch,
		Wait:    b.maxWait,
		Size:    func(c *batchCall) int { return len(c.queries) },
		Arrived: func(c *batchCall) time.Time { return c.arrived },
		Stop:    b.quit,
	}).Run(b.run)
}

// run executes one batch and answers its callers.
func (b *Batcher) run(batch []*batchCall) {
	// Drop callers that are already gone.
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.resp <- batchResult{err: err}
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}

	// The merged call is cancelled when every caller in it is gone.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var remaining atomic.Int32
	remaining.Store(int32(len(live)))
	for _, c := range live {
		stop := context.AfterFunc(c.ctx, func() {
			if remaining.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}

	var (
		queries []string
		ks      []int
	)
	for _, c := range live {
		queries = append(queries, c.queries...)
		for range c.queries {
			ks = append(ks, c.k)
		}
	}
	lists, err := b.retrieveChunked(ctx, queries, ks)
	off := 0
	for _, c := range live {
		if err != nil {
			c.resp <- batchResult{err: err}
			continue
		}
		mine := lists[off : off+len(c.queries) : off+len(c.queries)]
		off += len(c.queries)
		c.resp <- batchResult{lists: mine}
	}
}

// retrieveChunked calls the underlying retriever on at most maxBatch
// queries at a time, queries[i] at width ks[i], recovering a panic into an error so that one bad
// batch cannot kill the owner goroutine.
func (b *Batcher) retrieveChunked(ctx context.Context, queries []string, ks []int) (lists [][]rlsearch.Hit, err error) {
	defer func() {
		if p := recover(); p != nil {
			lists, err = nil, fmt.Errorf("server: batcher: retriever %s: %w", b.r.Name(), recovered.Of("batcher", p))
		}
	}()
	recovered.Probe("batcher")
	lists = make([][]rlsearch.Hit, 0, len(queries))
	for start := 0; start < len(queries); start += b.maxBatch {
		end := min(start+b.maxBatch, len(queries))
		got, err := rlsearch.RetrieveWidths(ctx, b.counted(), queries[start:end], ks[start:end])
		if err != nil {
			return nil, err
		}
		lists = append(lists, got...)
	}
	return lists, nil
}

// counted returns b.r counting its calls in b.calls, with r's
// RetrieveWidths when it has one.
func (b *Batcher) counted() rlsearch.Retriever {
	c := counted{b: b}
	if w, ok := b.r.(rlsearch.WidthRetriever); ok {
		return countedWidths{c, w}
	}
	return c
}

type counted struct{ b *Batcher }

func (c counted) Name() string               { return c.b.r.Name() }
func (c counted) Unwrap() rlsearch.Retriever { return c.b.r }
func (c counted) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	c.b.calls.Add(1)
	return c.b.r.Retrieve(ctx, queries, k)
}

type countedWidths struct {
	counted
	w rlsearch.WidthRetriever
}

func (c countedWidths) RetrieveWidths(ctx context.Context, queries []string, ks []int) ([][]rlsearch.Hit, error) {
	c.b.calls.Add(1)
	return c.w.RetrieveWidths(ctx, queries, ks)
}
