package sdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlsearch/rlsearch"
)

// Cache memoises retriever results by (retriever, query). Exact retrievers
// return top-k lists that are prefixes of each other (hits are totally
// ordered by descending score, ties by ascending row; see rlsearch.Hit), so
// an entry fetched at width K also answers every width k ≤ K by slicing,
// and an entry shorter than its width (the index had no more matches)
// answers every width.
//
// Approximate retrievers (HNSW: candidate list max(efSearch, k)) are not
// prefix-stable (rlsearch.PrefixStable): the fetchers of this package keep
// their lists by exact width, so that a cached answer is always the one a
// cold call at that width returns, whatever width another program or
// execution asked first.
//
// A Cache is safe for concurrent use. Returned slices are shared and
// read-only. Share one Cache across a batch, or across the executions of a
// mutation search over one question; do not share it across index versions.
type Cache struct {
	mu     sync.Mutex
	m      map[cacheKey]cacheEntry
	w      map[widthKey][]rlsearch.Hit // lists of retrievers that are not prefix-stable, by exact width
	docs   sync.Map                    // int32 row -> *docEntry, so repeated hits are not decoded again
	hits   atomic.Int64
	misses atomic.Int64
}

type cacheKey struct{ route, query string }

type widthKey struct {
	route, query string
	k            int
}

type cacheEntry struct {
	hits []rlsearch.Hit
	k    int // width asked for when hits were fetched
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{m: map[cacheKey]cacheEntry{}, w: map[widthKey][]rlsearch.Hit{}}
}

// get is Get for retriever r: by prefix for a prefix-stable r, else by
// exact width.
func (c *Cache) get(r rlsearch.Retriever, query string, k int) ([]rlsearch.Hit, bool) {
	if rlsearch.PrefixStable(r) {
		return c.Get(r.Name(), query, k)
	}
	c.mu.Lock()
	h, ok := c.w[widthKey{r.Name(), query, k}]
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return h, true
}

// put is Put for retriever r (see get).
func (c *Cache) put(r rlsearch.Retriever, query string, k int, hits []rlsearch.Hit) {
	if rlsearch.PrefixStable(r) {
		c.Put(r.Name(), query, k, hits)
		return
	}
	c.mu.Lock()
	c.w[widthKey{r.Name(), query, k}] = hits
	c.mu.Unlock()
}

// Get returns the top k hits of query on the named retriever when a cached
// entry covers width k (by slicing a wider entry: for prefix-stable
// retrievers only).
func (c *Cache) Get(route, query string, k int) ([]rlsearch.Hit, bool) {
	c.mu.Lock()
	e, ok := c.m[cacheKey{route, query}]
	c.mu.Unlock()
	if !ok || (e.k < k && len(e.hits) >= e.k) {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.hits[:min(k, len(e.hits))], true
}

// Put records the top-k hits of query; a wider entry already present is kept.
func (c *Cache) Put(route, query string, k int, hits []rlsearch.Hit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cacheKey{route, query}
	if e, ok := c.m[key]; ok && e.k >= k {
		return
	}
	c.m[key] = cacheEntry{hits: hits, k: k}
}

// doc returns the document at row through the cache; concurrent callers
// of one row decode it once, within the context of the caller that fetches
// it (docOf). A failed fetch is not kept; a caller that waited on another
// caller's fetch that ended with that caller's context error fetches again
// within its own ctx (a few times at most, then it fetches directly).
func (c *Cache) doc(ctx context.Context, corpus Corpus, row int32) (rlsearch.Document, error) {
	for range 3 {
		v, _ := c.docs.LoadOrStore(row, &docEntry{})
		e := v.(*docEntry)
		mine := false
		e.once.Do(func() { mine = true; e.doc, e.err = docOf(ctx, corpus, row) })
		if e.err == nil {
			return e.doc, nil
		}
		c.docs.CompareAndDelete(row, e)
		if mine || ctx.Err() != nil || !isCtxErr(e.err) {
			return e.doc, e.err
		}
	}
	return docOf(ctx, corpus, row)
}

// isCtxErr reports whether err is a context's cancellation or deadline.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

type docEntry struct {
	once sync.Once
	doc  rlsearch.Document
	err  error
}

// Stats returns the number of Get calls answered and missed.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// Len is the number of cached (route, query) entries, plus the (route,
// query, width) entries of retrievers that are not prefix-stable.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) + len(c.w)
}

// fetcher answers one retrieval call of one program.
type fetcher interface {
	fetch(ctx context.Context, r rlsearch.Retriever, query string, k int) ([]rlsearch.Hit, error)
	docCache() *Cache // nil: resolve rows through the corpus every time
}

func (f directFetcher) docCache() *Cache { return f.cache }
func (c *coalescer) docCache() *Cache    { return c.cache }

// directFetcher calls the retriever once per call, through an optional cache.
type directFetcher struct{ cache *Cache }

func (f directFetcher) fetch(ctx context.Context, r rlsearch.Retriever, query string, k int) ([]rlsearch.Hit, error) {
	if f.cache != nil {
		if h, ok := f.cache.get(r, query, k); ok {
			return h, nil
		}
	}
	res, err := r.Retrieve(ctx, []string{query}, k)
	if err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, errBadRetriever(r, 1, len(res))
	}
	if f.cache != nil {
		f.cache.put(r, query, k, res[0])
	}
	return res[0], nil
}

// coalescer gathers the retrieval calls of the programs of one batch and
// answers the calls waiting at the same moment with one Retrieve per
// retriever (one encoder batch, one index batch). It flushes when every
// running program of the batch is waiting on a call (or has finished), when
// MaxBatch calls are queued, or when the oldest queued call has waited
// CoalesceWait. Results go through the batch's Cache, so repeated
// (route, query) calls are answered once.
type coalescer struct {
	cache    *Cache
	maxBatch int
	wait     time.Duration
	ctx      context.Context // the batch's context, for the retriever calls

	mu      sync.Mutex
	running int // programs executing (not waiting on a call)
	pending []*fetchReq
	timer   *time.Timer

	batches atomic.Int64 // Retrieve calls made
}

type fetchReq struct {
	r     rlsearch.Retriever
	query string
	k     int
	hits  []rlsearch.Hit
	err   error
	done  chan struct{}
}

func newCoalescer(ctx context.Context, cache *Cache, maxBatch int, wait time.Duration) *coalescer {
	return &coalescer{ctx: ctx, cache: cache, maxBatch: maxBatch, wait: wait}
}

// enter marks a program as running; exit marks it finished.
func (c *coalescer) enter() {
	c.mu.Lock()
	c.running++
	c.mu.Unlock()
}

func (c *coalescer) exit() {
	c.mu.Lock()
	c.running--
	batch := c.takeIfIdleLocked()
	c.mu.Unlock()
	c.flush(batch)
}

func (c *coalescer) takeIfIdleLocked() []*fetchReq {
	if len(c.pending) == 0 || (c.running > 0 && len(c.pending) < c.maxBatch) {
		return nil
	}
	return c.takeLocked()
}

func (c *coalescer) takeLocked() []*fetchReq {
	b := c.pending
	c.pending = nil
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	c.running += len(b) // they run again once answered
	return b
}

func (c *coalescer) fetch(ctx context.Context, r rlsearch.Retriever, query string, k int) ([]rlsearch.Hit, error) {
	if h, ok := c.cache.get(r, query, k); ok {
		return h, nil
	}
	req := &fetchReq{r: r, query: query, k: k, done: make(chan struct{})}
	c.mu.Lock()
	c.pending = append(c.pending, req)
	c.running--
	batch := c.takeIfIdleLocked()
	if batch == nil && c.timer == nil && len(c.pending) > 0 {
		c.timer = time.AfterFunc(c.wait, c.onTimer)
	}
	c.mu.Unlock()
	if batch != nil {
		go c.flush(batch) // not inline: this program's own deadline must still end its wait
	}
	select {
	case <-req.done:
		return req.hits, req.err
	case <-ctx.Done():
		// The flush that later answers req counts this program as running
		// again; its exit balances that.
		return nil, ctx.Err()
	}
}

func (c *coalescer) onTimer() {
	c.mu.Lock()
	var batch []*fetchReq
	if c.timer != nil {
		c.timer = nil
		if len(c.pending) > 0 {
			batch = c.takeLocked()
		}
	}
	c.mu.Unlock()
	c.flush(batch)
}

// flush answers a batch: per retriever, the distinct queries not in the
// cache are retrieved in one call, at the widest width asked for a
// prefix-stable retriever; for any other retriever every (query, width)
// is retrieved at its own width (rlsearch.RetrieveWidths), the widths'
// calls running concurrently so that a batching queue behind the
// retriever can still merge them into one encoder batch.
func (c *coalescer) flush(batch []*fetchReq) {
	if len(batch) == 0 {
		return
	}
	type group struct {
		r       rlsearch.Retriever
		stable  bool
		queries []string
		ks      []int
		seen    map[widthKey]bool
		k       int
	}
	var groups []*group
	byName := map[string]*group{}
	for _, q := range batch {
		if _, ok := c.cache.get(q.r, q.query, q.k); ok {
			continue
		}
		g := byName[q.r.Name()]
		if g == nil {
			g = &group{r: q.r, stable: rlsearch.PrefixStable(q.r), seen: map[widthKey]bool{}}
			byName[q.r.Name()] = g
			groups = append(groups, g)
		}
		g.k = max(g.k, q.k)
		key := widthKey{query: q.query}
		if !g.stable {
			key.k = q.k
		}
		if !g.seen[key] {
			g.seen[key] = true
			g.queries = append(g.queries, q.query)
			g.ks = append(g.ks, q.k)
		}
	}
	failed := map[string]error{}
	for _, g := range groups {
		c.batches.Add(1)
		if g.stable {
			res, err := g.r.Retrieve(c.ctx, g.queries, g.k)
			if err == nil && len(res) != len(g.queries) {
				err = errBadRetriever(g.r, len(g.queries), len(res))
			}
			if err != nil {
				failed[g.r.Name()] = err
				continue
			}
			for i, q := range g.queries {
				c.cache.put(g.r, q, g.k, res[i])
			}
			continue
		}
		if err := c.fetchWidths(g.r, g.queries, g.ks); err != nil {
			failed[g.r.Name()] = err
		}
	}
	for _, q := range batch {
		if err := failed[q.r.Name()]; err != nil {
			q.err = err
		} else if h, ok := c.cache.get(q.r, q.query, q.k); ok {
			q.hits = h
		} else {
			q.err = errBadRetriever(q.r, 1, 0)
		}
		close(q.done)
	}
}

// fetchWidths retrieves queries[i] at width ks[i] from r into the cache:
// one Retrieve per distinct width, concurrently. It returns the first
// error.
func (c *coalescer) fetchWidths(r rlsearch.Retriever, queries []string, ks []int) error {
	byK := map[int][]string{}
	var order []int
	for i, k := range ks {
		if _, ok := byK[k]; !ok {
			order = append(order, k)
		}
		byK[k] = append(byK[k], queries[i])
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for j, k := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil { // a retriever's panic fails this batch, not the process
					errs[j] = fmt.Errorf("sdk: retriever %s panicked: %v", r.Name(), p)
				}
			}()
			qs := byK[k]
			res, err := r.Retrieve(c.ctx, qs, k)
			if err == nil && len(res) != len(qs) {
				err = errBadRetriever(r, len(qs), len(res))
			}
			if err != nil {
				errs[j] = err
				return
			}
			for i, q := range qs {
				c.cache.put(r, q, k, res[i])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
