// Package cache keeps retrieval results across requests, for the traffic
// of RL rollouts: a GRPO group sends the same question's searches from
// every rollout, and the same prompts come back epoch after epoch, while a
// server de-duplicates only within one request.
//
// A Cache is an LRU bounded in bytes, shared by every retriever it wraps
// (Wrap): `rlsearch serve` wraps each retriever once, so /retrieve,
// programs, mutate and the retrieval reward all read and fill the same
// cache. An entry is keyed by the index's build id, the retriever's name,
// k and the query's key: for BM25 the analysed query (bm25.QueryKey: the
// sorted analysed terms, which is all BM25 scores), for dense retrieval the
// exact query text. Reranking is not cached (it is not part of a
// retriever), so a key needs no rerank settings. A cached list is exactly
// what the retriever returned for that key, so results with and without
// the cache are identical (TestReplayIdentical replays the 763
// wiki_multihop questions × 5 rollouts both ways).
//
// Concurrent requests for a key that is being retrieved wait for that
// retrieval instead of repeating it (counted as "shared"); when it fails
// they retrieve for themselves, and failures are never cached.
//
// Memory: an entry is charged len(key) + 8 bytes per hit + EntryOverhead
// (the map entry, list element and slice headers); the cache keeps the
// total at or below Config.MaxBytes by evicting the least recently used.
//
// Metrics (Collector): rlsearch_cache_lookups_total{retriever,result}
// (result hit, shared or miss), rlsearch_cache_hit_ratio (hits and shared
// over lookups since start), rlsearch_cache_bytes, rlsearch_cache_entries,
// rlsearch_cache_max_bytes and rlsearch_cache_evictions_total.
//
// Every method is safe for concurrent use. The package has no cgo and no
// build tags.
//
// Example:
//
//	c, err := cache.New(cache.Config{MaxBytes: 256 << 20, BuildID: ix.BuildID()})
//	if err != nil { ... }
//	bm25 := c.Wrap(retrievers["bm25"], bm25.QueryKey)
//	e5 := c.Wrap(retrievers["e5"], nil) // exact query text
package cache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
)

// EntryOverhead is the bytes an entry is charged besides its key and hits:
// the map bucket slot and key header (≈ 32), the list element (48), the
// entry struct with its hits slice header (≈ 64), rounded up.
const EntryOverhead = 160

// DefaultMaxBytes is `rlsearch serve`'s default --cache-bytes: 256 MiB,
// about 1.1 million cached top-3 lists (~230 bytes each with a 40-byte
// query).
const DefaultMaxBytes = 256 << 20

// Config configures New.
type Config struct {
	// MaxBytes bounds the cache, in bytes; 0 means DefaultMaxBytes
	// (256 MiB), and rlsearch.Off (any negative value) turns the cache
	// off: New returns a nil *Cache, whose Wrap returns the retriever as
	// it is (the options convention, rlsearch.Off).
	MaxBytes int64
	// BuildID identifies the index the results come from (index.BuildID);
	// it is part of every key, so that results of another build of the
	// index are never served.
	BuildID string
	// Fingerprint is the serving configuration's fingerprint
	// (app.Fingerprint.String: build, encoder, backend and parameters). A
	// cache file (Save, Load) carries it, and Load refuses a file of
	// another fingerprint.
	Fingerprint string
}

// Cache is an LRU of retrieval results bounded in bytes. A nil *Cache is
// valid and caches nothing.
type Cache struct {
	cfg       Config
	mu        sync.Mutex
	entries   map[string]*list.Element // of *entry
	lru       *list.List               // front = most recently used
	bytes     int64
	flights   map[string]*flight
	evictions uint64

	hits, shared, misses atomic.Uint64 // all retrievers

	lookups *prometheus.CounterVec
	descs   []*prometheus.Desc
}

type entry struct {
	key  string
	hits []rlsearch.Hit
	size int64
}

// flight is a retrieval in progress that other callers wait for.
type flight struct {
	done chan struct{}
	hits []rlsearch.Hit
	err  error
}

// New returns a cache of cfg.MaxBytes (0: DefaultMaxBytes), or nil (a
// valid, disabled cache) when cfg.MaxBytes is rlsearch.Off (negative).
// It returns no error; the error result is kept for the callers.
func New(cfg Config) (*Cache, error) {
	if cfg.MaxBytes < 0 {
		return nil, nil
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	c := &Cache{cfg: cfg, entries: map[string]*list.Element{}, lru: list.New(), flights: map[string]*flight{}}
	c.lookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rlsearch_cache_lookups_total",
		Help: "Queries looked up in the result cache, by retriever and result: hit (cached), shared (waited for the same query in flight), miss (retrieved).",
	}, []string{"retriever", "result"})
	c.descs = []*prometheus.Desc{
		prometheus.NewDesc("rlsearch_cache_bytes", "Bytes charged to the cached results (keys, 8 bytes a hit, 160 per entry).", nil, nil),
		prometheus.NewDesc("rlsearch_cache_entries", "Cached result lists.", nil, nil),
		prometheus.NewDesc("rlsearch_cache_max_bytes", "The cache's bound in bytes (--cache-bytes).", nil, nil),
		prometheus.NewDesc("rlsearch_cache_evictions_total", "Result lists evicted to stay within the bound.", nil, nil),
		prometheus.NewDesc("rlsearch_cache_hit_ratio", "Lookups answered from the cache (hit or shared) over all lookups since start; 0 before any.", nil, nil),
	}
	return c, nil
}

// Stats is a snapshot of the cache.
type Stats struct {
	Hits, Shared, Misses uint64 // lookups by result, all retrievers
	Entries              int
	Bytes, MaxBytes      int64
	Evictions            uint64
}

// HitRatio is (Hits + Shared) / lookups, 0 before any lookup.
func (s Stats) HitRatio() float64 {
	n := s.Hits + s.Shared + s.Misses
	if n == 0 {
		return 0
	}
	return float64(s.Hits+s.Shared) / float64(n)
}

// Stats returns the current counts (zero for a nil cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	s := Stats{Entries: c.lru.Len(), Bytes: c.bytes, MaxBytes: c.cfg.MaxBytes, Evictions: c.evictions}
	c.mu.Unlock()
	s.Hits, s.Shared, s.Misses = c.hits.Load(), c.shared.Load(), c.misses.Load()
	return s
}

// Describe implements prometheus.Collector.
func (c *Cache) Describe(ch chan<- *prometheus.Desc) {
	c.lookups.Describe(ch)
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Cache) Collect(ch chan<- prometheus.Metric) {
	c.lookups.Collect(ch)
	s := c.Stats()
	for i, v := range []float64{float64(s.Bytes), float64(s.Entries), float64(s.MaxBytes), float64(s.Evictions), s.HitRatio()} {
		t := prometheus.GaugeValue
		if i == 3 {
			t = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.descs[i], t, v)
	}
}

const (
	resultHit    = "hit"
	resultShared = "shared"
	resultMiss   = "miss"
)

// Wrap returns r with its results cached, or r itself for a nil cache.
// key maps a query to its cache key (nil: the exact text); two queries
// with the same key must get the same hits from r (bm25.QueryKey for
// BM25). The returned retriever has r's name; its lists are the caller's
// (copies of the cached ones).
func (c *Cache) Wrap(r rlsearch.Retriever, key func(string) string) rlsearch.Retriever {
	if c == nil {
		return r
	}
	if key == nil {
		key = func(q string) string { return q }
	}
	name := r.Name()
	prefix := c.cfg.BuildID + "\x00" + name + "\x00"
	return &cached{c: c, r: r, key: key, prefix: prefix,
		hit: c.lookups.WithLabelValues(name, resultHit), shared: c.lookups.WithLabelValues(name, resultShared), miss: c.lookups.WithLabelValues(name, resultMiss)}
}

type cached struct {
	c                 *Cache
	r                 rlsearch.Retriever
	key               func(string) string
	prefix            string
	hit, shared, miss prometheus.Counter
}

func (w *cached) Name() string { return w.r.Name() }

// Unwrap returns the cached retriever.
func (w *cached) Unwrap() rlsearch.Retriever { return w.r }

// Retrieve answers each query from the cache, from a retrieval of the same
// key in flight, or from one call to the wrapped retriever with every
// other distinct key of the batch. Errors: the wrapped retriever's (for a
// k < 0 before any lookup), ctx.Err() while waiting.
func (w *cached) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if k < 0 {
		return w.r.Retrieve(ctx, queries, k) // its own error for bad input
	}
	c := w.c
	ks := w.prefix + strconv.Itoa(k) + "\x00"
	keys := make([]string, len(queries))
	for i, q := range queries {
		keys[i] = ks + w.key(q)
	}
	uniq, at := rlsearch.Distinct(keys)
	found := make([][]rlsearch.Hit, len(uniq))
	var mine []int // indexes into uniq that this call retrieves
	waits := map[int]*flight{}
	c.mu.Lock()
	for u, key := range uniq {
		if el, ok := c.entries[key]; ok {
			c.lru.MoveToFront(el)
			found[u] = el.Value.(*entry).hits
			w.hit.Inc()
			c.hits.Add(1)
			continue
		}
		if f, ok := c.flights[key]; ok {
			waits[u] = f
			continue
		}
		c.flights[key] = &flight{done: make(chan struct{})}
		mine = append(mine, u)
	}
	c.mu.Unlock()
	if len(mine) > 0 {
		w.miss.Add(float64(len(mine)))
		c.misses.Add(uint64(len(mine)))
		if err := w.fetch(ctx, k, uniq, queries, at, mine, found, true); err != nil {
			return nil, err
		}
	}
	var retry []int
	for u, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			retry = append(retry, u)
			continue
		}
		found[u] = f.hits
		w.shared.Inc()
		c.shared.Add(1)
	}
	if len(retry) > 0 { // the shared retrieval failed (its caller may have left): retrieve for ourselves
		w.miss.Add(float64(len(retry)))
		c.misses.Add(uint64(len(retry)))
		if err := w.fetch(ctx, k, uniq, queries, at, retry, found, false); err != nil {
			return nil, err
		}
	}
	out := make([][]rlsearch.Hit, len(queries))
	for i, u := range at {
		out[i] = append([]rlsearch.Hit{}, found[u]...)
	}
	return out, nil
}

// fetch retrieves the keys uniq[us] with one call to the wrapped
// retriever, caches the lists and, when owned, completes their flights
// (with the error on failure, also when the retriever panics).
func (w *cached) fetch(ctx context.Context, k int, uniq, queries []string, at []int, us []int, found [][]rlsearch.Hit, owned bool) (err error) {
	c := w.c
	first := make(map[int]int, len(us)) // uniq index → first query with that key
	for i := len(at) - 1; i >= 0; i-- {
		first[at[i]] = i
	}
	qs := make([]string, len(us))
	for j, u := range us {
		qs[j] = queries[first[u]]
	}
	done := false
	if owned {
		defer func() {
			if !done { // the retriever panicked: release the waiters, then re-panic
				c.complete(uniq, us, nil, errors.New("cache: the retriever panicked"))
			}
		}()
	}
	hits, err := w.r.Retrieve(ctx, qs, k)
	if err == nil && len(hits) != len(qs) {
		err = fmt.Errorf("cache: retriever %s returned %d lists for %d queries", w.r.Name(), len(hits), len(qs))
	}
	var stored [][]rlsearch.Hit
	if err == nil {
		stored = make([][]rlsearch.Hit, len(us))
		for j, u := range us {
			stored[j] = slices.Clone(hits[j])
			found[u] = stored[j]
		}
	}
	c.mu.Lock()
	if err == nil {
		for j, u := range us {
			c.add(uniq[u], stored[j])
		}
	}
	c.mu.Unlock()
	if owned {
		c.complete(uniq, us, stored, err)
	}
	done = true
	return err
}

// complete ends the flights of keys uniq[us] with their lists or err.
func (c *Cache) complete(uniq []string, us []int, lists [][]rlsearch.Hit, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, u := range us {
		f := c.flights[uniq[u]]
		if f == nil {
			continue
		}
		delete(c.flights, uniq[u])
		if err != nil {
			f.err = err
		} else {
			f.hits = lists[j]
		}
		close(f.done)
	}
}

// add caches hits under key (c.mu held), evicting the least recently used
// entries to stay within MaxBytes. A list larger than MaxBytes is not
// kept. hits must not be modified afterwards.
func (c *Cache) add(key string, hits []rlsearch.Hit) {
	size := int64(len(key)) + 8*int64(len(hits)) + EntryOverhead
	if size > c.cfg.MaxBytes {
		return
	}
	if el, ok := c.entries[key]; ok { // same key, same list
		c.lru.MoveToFront(el)
		return
	}
	c.entries[key] = c.lru.PushFront(&entry{key: key, hits: hits, size: size})
	c.bytes += size
	for c.bytes > c.cfg.MaxBytes {
		el := c.lru.Back()
		e := el.Value.(*entry)
		c.lru.Remove(el)
		delete(c.entries, e.key)
		c.bytes -= e.size
		c.evictions++
	}
}
