package sdk

import (
	"context"
	"sync"
)

// BatchOptions configure RunBatch.
type BatchOptions struct {
	// NoCoalesce answers every retrieval call on its own instead of merging
	// the calls waiting at the same moment into one Retrieve per route.
	NoCoalesce bool
	// NoMemo disables the batch's (route, query, width) memo. Coalescing
	// needs the memo, so NoMemo implies NoCoalesce.
	NoMemo bool
	// Cache, when non-nil, is used (and filled) as the memo instead of a
	// fresh one, so that later batches over the same index can share it.
	Cache *Cache
	// Concurrency bounds the programs running at once; 0 means all of them.
	Concurrency int
}

// RunBatch runs programs concurrently and returns one Result per request,
// in order. With coalescing (the default) the retrieval calls of the
// programs that wait at the same moment become one Retrieve per route (one
// encoder batch and one index batch), and every (route, query) is fetched
// once per batch at the widest width asked, smaller widths being served by
// slicing. Results are the same as running each program alone with Run.
func (rt *Runtime) RunBatch(ctx context.Context, reqs []Request, opt BatchOptions) []Result {
	out := make([]Result, len(reqs))
	cache := opt.Cache
	if cache == nil && !opt.NoMemo {
		cache = NewCache()
	}
	var f fetcher = directFetcher{cache: cache}
	var co *coalescer
	if !opt.NoCoalesce && !opt.NoMemo {
		co = newCoalescer(ctx, cache, rt.cfg.MaxBatch, rt.cfg.CoalesceWait)
		f = co
	}
	conc := opt.Concurrency
	if conc <= 0 || conc > len(reqs) {
		conc = len(reqs)
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range reqs {
		sem <- struct{}{}
		if co != nil {
			co.enter()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if co != nil {
				defer co.exit()
			}
			out[i] = rt.run(ctx, reqs[i], f)
		}()
	}
	wg.Wait()
	return out
}
