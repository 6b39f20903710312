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
	// Concurrency bounds the programs of this batch running at once; 0
	// means Config.MaxConcurrent. All batches of a Runtime together never
	// run more than Config.MaxConcurrent programs.
	Concurrency int
}

// RunBatch runs programs concurrently and returns one Result per request,
// in order. At most Config.MaxConcurrent programs of all the Runtime's
// batches execute at once; the others wait, and a program's time budget
// starts when it starts executing. With coalescing (the default) the
// retrieval calls of the executing programs that wait at the same moment
// become one Retrieve per route (one encoder batch and one index batch),
// and every (route, query) is fetched once per batch at the widest width
// asked, smaller widths being served by slicing, on prefix-stable
// retrievers (rlsearch.PrefixStable: BM25, exact flat); on approximate
// ones (HNSW) every (route, query, width) is fetched at its own width.
// Results are the same as
// running each program alone with Run. When ctx is cancelled, the
// programs not yet started get a cancelled result.
//
// A program stuck in one uninterruptible Starlark operation past its
// deadline gets its budget_exceeded result abandonGrace (50 ms) after the
// deadline; its goroutine keeps its Config.MaxConcurrent slot until the
// operation ends, so the process stays bounded.
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
	if conc <= 0 || conc > rt.cfg.MaxConcurrent {
		conc = rt.cfg.MaxConcurrent
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range reqs {
		// The batch's own bound first, then a slot of the Runtime: a
		// program is "running" for the coalescer only once it has both.
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			out[i] = rt.notStarted(ctx, reqs[i])
			continue
		}
		select {
		case rt.slots <- struct{}{}:
		case <-ctx.Done():
			<-sem
			out[i] = rt.notStarted(ctx, reqs[i])
			continue
		}
		if co != nil {
			co.enter()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// The slot and the coalescer's count are released when the
			// program's goroutine really ends, which for an abandoned
			// program is after exec returned.
			out[i] = rt.exec(ctx, reqs[i], f, func() {
				if co != nil {
					co.exit()
				}
				<-rt.slots
			})
		}()
	}
	wg.Wait()
	return out
}

// notStarted is the result of a program whose batch was cancelled before
// it could start.
func (rt *Runtime) notStarted(ctx context.Context, req Request) Result {
	e, ok := ctxError(ctx.Err(), rt.cfg.Budgets.Timeout)
	if !ok {
		e = newErr(CodeCancelled, ctx.Err(), "execution cancelled: %v", ctx.Err())
	}
	if e.Code == CodeBudget { // the caller's deadline, not this program's budget
		e = newErr(CodeCancelled, ctx.Err(), "execution cancelled before the program started: %v", ctx.Err())
	}
	return Result{ID: req.ID, Code: e.Code, Error: e.Msg, Observation: rt.errorLine(e.Code, e.Msg), PrintedIDs: []string{}}
}
