package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/recovered"
	"github.com/rlsearch/rlsearch/server"
)

// Router fans requests out to the shard servers of one build and merges
// their answers. Build it with New; it is safe for concurrent use; Close
// stops its health checks.
type Router struct {
	cfg     Config
	log     *slog.Logger
	client  *http.Client
	metrics *metrics

	want       *Identity // the build: BuildID, CorpusSHA256, Count, TotalRows
	retrievers []string  // served by every shard, sorted
	stable     []string  // the retrievers every shard serves prefix-stable (exact), sorted
	shards     []*shardGroup

	mu       sync.Mutex
	replicas map[string]*replica // by URL

	slots    chan struct{} // MaxInFlight fan-outs
	docs     *lru.Cache[int32, rlsearch.Document]
	stop     context.CancelFunc
	loopDone chan struct{}
}

// ShardError is the error of a fan-out in which a shard had no answer:
// no live replica, every attempt failed, or none within the deadline. It
// wraps rlsearch.ErrOverloaded (503 with Retry-After: the trainers'
// clients retry) and names the shard.
type ShardError struct {
	Shard, Count int
	Reason       string
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("router: shard %d of %d unavailable: %s", e.Shard, e.Count, e.Reason)
}

// Unwrap returns rlsearch.ErrOverloaded.
func (e *ShardError) Unwrap() error { return rlsearch.ErrOverloaded }

// ErrBuild is wrapped by New's error when the endpoints serve different
// builds (or not shards), or another build than Config.BuildID.
var ErrBuild = errors.New("router: shards do not belong together")

// New resolves the endpoints, reads every replica's /healthz and waits
// (up to StartTimeout) until every shard of the build has a live replica.
// It fails with ErrBuild, naming the endpoints, when they serve different
// builds or corpora, or an endpoint is not a shard server; with ErrConfig
// for a bad cfg; and with an error naming the missing shards and the
// failing endpoints when the wait ends. Replicas that are down at start
// join when their health check passes. The health loop runs until Close.
func New(ctx context.Context, cfg Config) (*Router, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	docs, err := lru.New[int32, rlsearch.Document](cfg.DocCache)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: cfg.MaxConnsPerReplica,
		MaxConnsPerHost:     cfg.MaxConnsPerReplica,
		// Below the shard servers' idle timeout (2 min), so the router
		// closes idle connections before a server does.
		IdleConnTimeout:    60 * time.Second,
		DisableCompression: true,
	}
	r := &Router{
		cfg: cfg, log: cfg.Logger, client: &http.Client{Transport: tr}, metrics: m,
		replicas: map[string]*replica{}, slots: make(chan struct{}, cfg.MaxInFlight), docs: docs,
	}
	if err := r.start(ctx); err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	loopCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stop, r.loopDone = stop, make(chan struct{})
	go r.healthLoop(loopCtx)
	return r, nil
}

// start finds the build and waits for every shard.
func (r *Router) start(ctx context.Context) error {
	deadline := time.Now().Add(r.cfg.StartTimeout)
	for {
		r.discover(ctx)
		if r.want == nil {
			if err := r.learnBuild(ctx); err != nil {
				return err
			}
		}
		if r.want != nil {
			var wg sync.WaitGroup
			for _, rep := range r.allReplicas() {
				wg.Add(1)
				go func() { defer wg.Done(); r.check(ctx, rep) }()
			}
			wg.Wait()
			var missing []int
			for _, g := range r.shards {
				if g.live() == 0 {
					missing = append(missing, g.index)
				}
			}
			if len(missing) == 0 {
				r.log.Info("router: every shard has a live replica", "build", r.want.BuildID, "shards", len(r.shards), "rows", r.want.TotalRows, "replicas", len(r.allReplicas()))
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("router: after %v, shards %v of build %s have no live replica; endpoints: %s", r.cfg.StartTimeout, missing, short(r.want.BuildID), r.describe())
			}
		} else if time.Now().After(deadline) {
			return fmt.Errorf("router: after %v no shard server answered; endpoints: %s", r.cfg.StartTimeout, r.describe())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// learnBuild probes every replica; once some answer, it fixes the build
// (Config.BuildID, else the one every answering shard server agrees on)
// and the shard layout. It fails with ErrBuild when they disagree or one
// is not a shard server.
func (r *Router) learnBuild(ctx context.Context) error {
	reps := r.allReplicas()
	hs := make([]*health, len(reps))
	errs := make([]error, len(reps))
	var wg sync.WaitGroup
	for i, rep := range reps {
		wg.Add(1)
		go func() { defer wg.Done(); hs[i], errs[i] = r.probe(ctx, rep, 2*time.Second) }()
	}
	wg.Wait()
	builds := map[string][]string{}
	var first *health
	var firstURL string
	var bad []string
	for i, h := range hs {
		rep := reps[i]
		rep.mu.Lock()
		if errs[i] != nil {
			rep.lastErr = errs[i].Error()
		}
		rep.mu.Unlock()
		if h == nil {
			continue
		}
		if why := mismatch(h, nil); why != "" {
			bad = append(bad, rep.url+": "+why)
			continue
		}
		s := h.Shard
		builds[s.BuildID] = append(builds[s.BuildID], fmt.Sprintf("%s (shard %d of %d, corpus %s)", rep.url, s.Index, s.Count, short(s.CorpusSHA256)))
		if first == nil || (r.cfg.BuildID != "" && s.BuildID == r.cfg.BuildID) {
			first, firstURL = h, rep.url
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrBuild, strings.Join(bad, "; "))
	}
	if first == nil {
		return nil // nobody answered yet
	}
	if r.cfg.BuildID != "" {
		for b, urls := range builds {
			if b != r.cfg.BuildID {
				return fmt.Errorf("%w: --shard-build is %s but %s serve build %s", ErrBuild, r.cfg.BuildID, strings.Join(urls, ", "), b)
			}
		}
	} else if len(builds) > 1 {
		var parts []string
		for _, b := range slices.Sorted(func(yield func(string) bool) {
			for b := range builds {
				if !yield(b) {
					return
				}
			}
		}) {
			parts = append(parts, fmt.Sprintf("build %s: %s", short(b), strings.Join(builds[b], ", ")))
		}
		return fmt.Errorf("%w: the endpoints serve %d different builds (another corpus or another build; pin one with --shard-build): %s", ErrBuild, len(builds), strings.Join(parts, "; "))
	}
	id := *first.Shard
	want := &Identity{BuildID: id.BuildID, CorpusSHA256: id.CorpusSHA256, Count: id.Count, TotalRows: id.TotalRows}
	// Replicas of one build that disagree on the layout (shard count, total
	// rows, corpus) are refused before any is used as an index into the
	// layout: a proxy or a bug can claim "shard 2 of 3" beside "shard 1 of 2".
	for i, h := range hs {
		if h == nil {
			continue
		}
		why := mismatch(h, want)
		if why == "" && h.Shard.CorpusSHA256 != want.CorpusSHA256 {
			why = fmt.Sprintf("serves corpus %s, %s serves corpus %s under the same build id", short(h.Shard.CorpusSHA256), firstURL, short(want.CorpusSHA256))
		}
		if why != "" {
			bad = append(bad, reps[i].url+" "+why+" (as "+firstURL+" answered)")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: replicas of build %s disagree: %s", ErrBuild, short(id.BuildID), strings.Join(bad, "; "))
	}
	r.want = want
	r.retrievers = slices.Clone(first.Retrievers)
	slices.Sort(r.retrievers)
	r.stable = slices.Sorted(slices.Values(first.PrefixStable))
	// Shard layout: the build's even split (bm25.EvenBounds), which every
	// shard's first row and rows are checked against as it joins.
	r.shards = make([]*shardGroup, id.Count)
	for i := range r.shards {
		lo, hi := id.TotalRows*i/id.Count, id.TotalRows*(i+1)/id.Count
		r.shards[i] = &shardGroup{index: i, firstRow: lo, rows: hi - lo, label: strconv.Itoa(i)}
	}
	for i, h := range hs {
		if h == nil {
			continue
		}
		s, g := h.Shard, r.shards[h.Shard.Index]
		if s.FirstRow != g.firstRow || s.Rows != g.rows {
			return fmt.Errorf("%w: %s is shard %d with rows from %d (%d rows), but build %s splits %d rows into shard %d from %d (%d rows)", ErrBuild, reps[i].url, s.Index, s.FirstRow, s.Rows, short(id.BuildID), id.TotalRows, g.index, g.firstRow, g.rows)
		}
		hs[i].Retrievers = slices.Sorted(slices.Values(h.Retrievers))
		if !slices.Equal(hs[i].Retrievers, r.retrievers) {
			return fmt.Errorf("%w: %s serves retrievers %v, %s serves %v: start every shard server with the same --model", ErrBuild, reps[i].url, hs[i].Retrievers, firstURL, r.retrievers)
		}
		if st := slices.Sorted(slices.Values(h.PrefixStable)); !slices.Equal(st, r.stable) {
			return fmt.Errorf("%w: %s serves exact (prefix-stable) retrievers %v, %s serves %v: start every shard server with the same --dense-backend", ErrBuild, reps[i].url, st, firstURL, r.stable)
		}
	}
	return nil
}

// describe lists every replica with its state, for errors.
func (r *Router) describe() string {
	var parts []string
	for _, rep := range r.allReplicas() {
		rep.mu.Lock()
		st := "up"
		if !rep.up.Load() {
			st = "down: " + rep.lastErr
		}
		if rep.refused != "" {
			st = "refused: " + rep.refused
		}
		parts = append(parts, rep.url+" "+st)
		rep.mu.Unlock()
	}
	if len(parts) == 0 {
		return "none resolved from " + strings.Join(r.cfg.Endpoints, ", ")
	}
	return strings.Join(parts, "; ")
}

// Close stops the health checks and closes idle connections.
func (r *Router) Close() {
	if r.stop != nil {
		r.stop()
		<-r.loopDone
		r.stop = nil
	}
	r.client.CloseIdleConnections()
}

// BuildID is the build the router serves.
func (r *Router) BuildID() string { return r.want.BuildID }

// Shards is the number of shards.
func (r *Router) Shards() int { return len(r.shards) }

// Retrievers returns a retriever per name every shard serves: each fans a
// call out to all shards and merges the answers (server.DocRetriever, so
// /retrieve writes the documents the shards sent).
func (r *Router) Retrievers() map[string]rlsearch.Retriever {
	m := map[string]rlsearch.Retriever{}
	for _, n := range r.retrievers {
		m[n] = &remote{r: r, name: n}
	}
	return m
}

// Docs returns the corpus as the router sees it: Len is the corpus's
// rows; Doc returns a document recently retrieved from the router's cache
// (Config.DocCache documents), else fetches it from its shard.
func (r *Router) Docs() server.DocSource { return docSource{r} }

// remote is one retriever over every shard.
type remote struct {
	r    *Router
	name string
}

func (x *remote) Name() string { return x.name }

// PrefixStable is true when every shard serves the retriever exactly (its
// /healthz lists it in "prefix_stable"): the merge of each shard's exact
// top k in Hit's total order is the exact top k, so a narrower list is a
// cut of a wider one and callers (the sdk's coalescer and the mutation
// verifier) may share one wide search.
func (x *remote) PrefixStable() bool { return slices.Contains(x.r.stable, x.name) }

// Retrieve is RetrieveDocs without the documents (cached for Docs).
func (x *remote) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	hits, docs, err := x.RetrieveDocs(ctx, queries, k)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		for j, h := range hits[i] {
			x.r.docs.Add(h.Row, docs[i][j])
		}
	}
	return hits, nil
}

// RetrieveDocs sends queries to every shard and merges each query's
// lists: the top k by descending score, ties by ascending corpus row,
// which is the order of one index over the corpus (the shards score with
// its statistics, so the scores are the same float32 values). A shard
// without an answer fails the call with a *ShardError under Fail (and
// marks the request unavailable, see server.MarkUnavailable); under
// Partial the other shards' lists are merged and the request is marked
// partial (server.MarkPartial), unless no shard answered. A shard's 4xx
// is the caller's fault and returned as rlsearch.ErrBadInput.
func (x *remote) RetrieveDocs(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, [][]rlsearch.Document, error) {
	r := x.r
	if k < 0 {
		return nil, nil, fmt.Errorf("%w: k = %d must be >= 0", rlsearch.ErrBadInput, k)
	}
	hits := make([][]rlsearch.Hit, len(queries))
	docs := make([][]rlsearch.Document, len(queries))
	if k == 0 || len(queries) == 0 {
		for i := range hits {
			hits[i], docs[i] = []rlsearch.Hit{}, []rlsearch.Document{}
		}
		return hits, docs, nil
	}
	select {
	case r.slots <- struct{}{}:
	default:
		r.metrics.rejected.Inc()
		return nil, nil, fmt.Errorf("router: %d fan-outs in flight (--router-max-inflight): %w", cap(r.slots), rlsearch.ErrOverloaded)
	}
	r.metrics.inFlight.Inc()
	defer func() { <-r.slots; r.metrics.inFlight.Dec() }()
	body, err := json.Marshal(RetrieveRequest{Queries: queries, TopK: k, Retriever: x.name})
	if err != nil {
		return nil, nil, err
	}
	timeout := r.cfg.ShardTimeout + time.Duration(len(queries))*r.cfg.PerQueryTimeout
	resps := make([]*RetrieveResponse, len(r.shards))
	errs := make([]error, len(r.shards))
	var wg sync.WaitGroup
	for i, g := range r.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recovered.Guard("router_fanout", &errs[i])
			recovered.Probe("router_fanout")
			resps[i], errs[i] = callShard(ctx, r, g, PathShardRetrieve, body, timeout, len(queries) <= r.cfg.HedgeMaxQueries, func(b []byte) (*RetrieveResponse, error) {
				var resp RetrieveResponse
				if err := json.Unmarshal(b, &resp); err != nil {
					return nil, fmt.Errorf("bad response: %v", err)
				}
				return &resp, r.checkRetrieve(g, &resp, len(queries), k)
			})
		}()
	}
	wg.Wait()
	if err := r.missing(ctx, errs); err != nil {
		return nil, nil, err
	}
	var all []Hit
	for qi := range queries {
		all = merge(all[:0], resps, qi, k)
		hits[qi], docs[qi] = make([]rlsearch.Hit, len(all)), make([]rlsearch.Document, len(all))
		for j, h := range all {
			hits[qi][j] = rlsearch.Hit{Row: int32(h.Row), Score: h.Score}
			docs[qi][j] = rlsearch.Document{ID: h.ID, Contents: h.Contents}
		}
	}
	return hits, docs, nil
}

// merge appends to buf the lists of query qi in resps (one answer per
// shard, nil for a shard without one), sorts them by descending score,
// ties by ascending corpus row (rlsearch.CompareHits), and returns the
// first k (all when fewer). The result aliases buf. It is the merge step
// of RetrieveDocs, without I/O (testdata/merge.txt).
func merge(buf []Hit, resps []*RetrieveResponse, qi, k int) []Hit {
	for _, resp := range resps {
		if resp != nil {
			buf = append(buf, resp.Results[qi]...)
		}
	}
	slices.SortFunc(buf, func(a, b Hit) int {
		return rlsearch.CompareHits(rlsearch.Hit{Row: int32(a.Row), Score: a.Score}, rlsearch.Hit{Row: int32(b.Row), Score: b.Score})
	})
	return buf[:min(k, len(buf))]
}

// checkRetrieve checks a shard's answer: its build and shard, one list per
// query, each at most k long, sorted, with rows of the shard.
func (r *Router) checkRetrieve(g *shardGroup, resp *RetrieveResponse, nq, k int) error {
	if resp.BuildID != r.want.BuildID || resp.Shard != g.index {
		return fmt.Errorf("answered as shard %d of build %s, want shard %d of build %s", resp.Shard, short(resp.BuildID), g.index, short(r.want.BuildID))
	}
	if len(resp.Results) != nq {
		return fmt.Errorf("%d lists for %d queries", len(resp.Results), nq)
	}
	for qi, l := range resp.Results {
		if len(l) > k {
			return fmt.Errorf("queries[%d]: %d hits for topk %d", qi, len(l), k)
		}
		for j, h := range l {
			if h.Row < int64(g.firstRow) || h.Row >= int64(g.firstRow+g.rows) {
				return fmt.Errorf("queries[%d]: row %d outside the shard's rows %d to %d", qi, h.Row, g.firstRow, g.firstRow+g.rows-1)
			}
			if j > 0 && !rlsearch.Less(rlsearch.Hit{Row: int32(l[j-1].Row), Score: l[j-1].Score}, rlsearch.Hit{Row: int32(h.Row), Score: h.Score}) {
				return fmt.Errorf("queries[%d]: hits %d and %d out of order", qi, j-1, j)
			}
		}
	}
	return nil
}

// missing applies the OnMissingShard policy to the shards whose call
// failed (errs[i] != nil) and returns the fan-out's error, if any: it
// counts the missing shards under the verdict's policy, marks the request
// partial (server.MarkPartial) when their lists are left out, and
// unavailable (server.MarkUnavailable) when it fails for them.
func (r *Router) missing(ctx context.Context, errs []error) error {
	v := onMissing(r.cfg.OnMissingShard, errs, ctx.Err())
	for _, se := range v.failed {
		r.metrics.missing.WithLabelValues(strconv.Itoa(se.Shard), v.policy).Inc()
		if v.policy == Partial {
			server.MarkPartial(ctx, partialNote(se))
		}
	}
	if v.err != nil && len(v.failed) > 0 {
		server.MarkUnavailable(ctx, v.err)
	}
	return v.err
}

// verdict is what the OnMissingShard policy makes of a fan-out's calls.
type verdict struct {
	// failed are the shards without an answer (the calls that failed
	// with a *ShardError), counted in rlsearch_router_missing_shard_total;
	// none when err is the caller's (a 4xx or its context).
	failed []*ShardError
	// policy is Partial when the other shards' lists are merged without
	// failed's, Fail when the call fails for them.
	policy string
	// err is the fan-out's error; nil when the lists are merged.
	err error
}

// partialNote is the server.MarkPartial report of a shard left out
// ("shard 1 of 3").
func partialNote(se *ShardError) string {
	return fmt.Sprintf("shard %d of %d", se.Shard, se.Count)
}

// onMissing judges a fan-out: errs[i] is shard i's call error (nil for an
// answer) and ctxErr the request context's error. An error that is not a
// *ShardError (a shard's 4xx, wrapping rlsearch.ErrBadInput, or the
// caller's context) is returned as it is; with every shard answered there
// is nothing to judge; a missing shard with the request's context ended
// returns that context's error; under Partial, with at least one shard
// answered, the others are merged; otherwise (Fail, or no shard answered)
// the first *ShardError is the error, its message listing every missing
// shard. Pure: RetrieveDocs's policy step without metrics or marks
// (testdata/merge.txt).
func onMissing(policy string, errs []error, ctxErr error) verdict {
	var failed []*ShardError
	for _, err := range errs {
		if err == nil {
			continue
		}
		var se *ShardError
		if !errors.As(err, &se) {
			return verdict{err: err} // the caller's fault (4xx) or its context
		}
		failed = append(failed, se)
	}
	if len(failed) == 0 {
		return verdict{}
	}
	if ctxErr != nil {
		return verdict{err: ctxErr}
	}
	if policy == Partial && len(failed) < len(errs) {
		return verdict{failed: failed, policy: Partial}
	}
	var err error = failed[0]
	if len(failed) > 1 {
		msgs := make([]string, len(failed))
		for i, se := range failed {
			msgs[i] = se.Error()
		}
		err = fmt.Errorf("%s: %w", strings.Join(msgs, "; "), failed[0])
	}
	return verdict{failed: failed, policy: Fail, err: err}
}

// clientError is a shard's 4xx: the request was at fault.
type clientError struct {
	status int
	msg    string
}

func (e *clientError) Error() string { return e.msg }
func (e *clientError) Unwrap() error { return rlsearch.ErrBadInput }

// maxResponse bounds a shard's answer (server.DefaultMaxResults hits of
// about 1 KB each, with room).
const maxResponse = 1 << 30

// callShard sends body to path on one of g's replicas and returns decode
// of the first good answer. It retries another replica (the same one
// when it is the only live one) after a failed attempt, up to Retries
// times, and, when hedgeOK, hedges once: when the first attempt has not
// answered within the hedge delay it also asks another live replica. Everything happens
// within timeout. The error is a *ShardError naming the shard, a
// *clientError for a 4xx, or ctx's error.
func callShard[T any](parent context.Context, r *Router, g *shardGroup, path string, body []byte, timeout time.Duration, hedgeOK bool, decode func([]byte) (*T, error)) (*T, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	type result struct {
		rep   *replica
		body  []byte
		err   error
		hedge bool
		took  time.Duration
	}
	ch := make(chan result, r.cfg.Retries+2)
	var tried []*replica
	outstanding, attempts := 0, 0
	launch := func(hedge, again bool) bool {
		rep := g.pick(tried, again)
		if rep == nil {
			return false
		}
		tried = append(tried, rep)
		outstanding++
		attempts++
		go func() {
			start := time.Now()
			var b []byte
			var err error
			func() {
				defer recovered.Guard("router_attempt", &err)
				recovered.Probe("router_attempt")
				b, err = r.attempt(ctx, rep, path, body)
			}()
			ch <- result{rep: rep, body: b, err: err, hedge: hedge, took: time.Since(start)}
		}()
		return true
	}
	fail := func(reason string) (*T, error) {
		return nil, &ShardError{Shard: g.index, Count: len(r.shards), Reason: reason}
	}
	if !launch(false, false) {
		return fail("no replica (" + r.shardState(g) + ")")
	}
	var hedgeC <-chan time.Time
	if hedgeOK && !r.cfg.NoHedge && g.live() > 1 {
		d := r.cfg.HedgeAfter
		if d == 0 {
			d = g.hedgeDelay()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		hedgeC = t.C
	}
	var errs []string
	for outstanding > 0 {
		select {
		case res := <-ch:
			outstanding--
			err := res.err
			var v *T
			if err == nil {
				if v, err = decode(res.body); err != nil {
					err = fmt.Errorf("%s: %w", res.rep.url, err)
				}
			}
			if err == nil {
				r.metrics.attempts.WithLabelValues(g.label, res.rep.url, "ok").Inc()
				r.metrics.latency.WithLabelValues(g.label).Observe(res.took.Seconds())
				if hedgeOK {
					g.observe(res.took) // the adaptive hedge delay is that of small requests
				}
				r.succeeded(res.rep)
				if res.hedge {
					r.metrics.hedgeWins.WithLabelValues(g.label).Inc()
				}
				return v, nil
			}
			var ce *clientError
			if errors.As(err, &ce) {
				r.metrics.attempts.WithLabelValues(g.label, res.rep.url, "client_error").Inc()
				return nil, fmt.Errorf("shard %d (%s): %w", g.index, res.rep.url, err)
			}
			if ctx.Err() != nil {
				break // the deadline or the caller: handled below
			}
			r.metrics.attempts.WithLabelValues(g.label, res.rep.url, "error").Inc()
			r.failed(res.rep, err)
			errs = append(errs, err.Error())
			if attempts <= r.cfg.Retries && launch(false, true) {
				r.metrics.retries.WithLabelValues(g.label).Inc()
			}
		case <-hedgeC:
			hedgeC = nil
			if launch(true, false) {
				r.metrics.hedges.WithLabelValues(g.label).Inc()
			}
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			if err := parent.Err(); err != nil {
				return nil, err // the caller's context, not the shard's deadline
			}
			return fail(fmt.Sprintf("no answer within %v from %s", timeout, urls(tried)))
		}
	}
	return fail(fmt.Sprintf("%d attempts failed: %s", attempts, strings.Join(errs, "; ")))
}

func urls(reps []*replica) string {
	s := make([]string, len(reps))
	for i, r := range reps {
		s[i] = r.url
	}
	return strings.Join(s, ", ")
}

// shardState describes g's replicas for an error.
func (r *Router) shardState(g *shardGroup) string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if len(g.replicas) == 0 {
		return "no replica has joined"
	}
	var parts []string
	for _, rep := range g.replicas {
		rep.mu.Lock()
		parts = append(parts, rep.url+": "+rep.lastErr)
		rep.mu.Unlock()
	}
	return strings.Join(parts, "; ")
}

// attempt sends one request to rep. A 4xx is a *clientError; a 5xx or a
// transport failure another error.
func (r *Router) attempt(ctx context.Context, rep *replica, path string, body []byte) ([]byte, error) {
	rep.inflight.Add(1)
	defer rep.inflight.Add(-1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rep.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("%s: read answer: %w", rep.url, err)
	}
	if resp.StatusCode == http.StatusOK {
		return b, nil
	}
	var e struct {
		Error string `json:"error"`
	}
	json.Unmarshal(b, &e)
	msg := fmt.Sprintf("%s%s: %s: %s", rep.url, path, resp.Status, cmpOr(e.Error, strings.TrimSpace(string(b[:min(len(b), 300)]))))
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != 499 {
		return nil, &clientError{status: resp.StatusCode, msg: msg}
	}
	return nil, errors.New(msg)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// docSource is Router.Docs.
type docSource struct{ r *Router }

func (d docSource) Len() int { return d.r.want.TotalRows }

// Doc returns the document at corpus row: from the cache of recently
// retrieved documents, else from its shard (one request, within the
// shard timeout).
func (d docSource) Doc(row int32) (rlsearch.Document, error) {
	return d.DocContext(context.Background(), row)
}

// DocContext is Doc within ctx: the shard fetch stops when ctx ends.
func (d docSource) DocContext(ctx context.Context, row int32) (rlsearch.Document, error) {
	r := d.r
	if doc, ok := r.docs.Get(row); ok {
		return doc, nil
	}
	if row < 0 || int(row) >= r.want.TotalRows {
		return rlsearch.Document{}, fmt.Errorf("router: row %d outside the corpus of %d rows", row, r.want.TotalRows)
	}
	i, _ := slices.BinarySearchFunc(r.shards, int(row), func(g *shardGroup, row int) int {
		switch {
		case row < g.firstRow:
			return 1
		case row >= g.firstRow+g.rows:
			return -1
		}
		return 0
	})
	g := r.shards[i]
	r.metrics.docFetches.Inc()
	body, _ := json.Marshal(DocsRequest{Rows: []int64{int64(row)}})
	resp, err := callShard(ctx, r, g, PathShardDocs, body, r.cfg.ShardTimeout, true, func(b []byte) (*DocsResponse, error) {
		var resp DocsResponse
		if err := json.Unmarshal(b, &resp); err != nil {
			return nil, fmt.Errorf("bad response: %v", err)
		}
		if resp.BuildID != r.want.BuildID || resp.Shard != g.index || len(resp.Docs) != 1 {
			return nil, fmt.Errorf("answered %d documents as shard %d of build %s, want 1 from shard %d of build %s", len(resp.Docs), resp.Shard, short(resp.BuildID), g.index, short(r.want.BuildID))
		}
		return &resp, nil
	})
	if err != nil {
		return rlsearch.Document{}, err
	}
	r.docs.Add(row, resp.Docs[0])
	return resp.Docs[0], nil
}

// Health describes the router for GET /healthz: the build, the policy,
// and per shard its rows and replicas (URL, live, requests in flight,
// last error), plus refused endpoints. Safe for concurrent use.
func (r *Router) Health() map[string]any {
	shards := make([]map[string]any, len(r.shards))
	var missing []int
	for i, g := range r.shards {
		var reps []map[string]any
		g.mu.RLock()
		for _, rep := range g.replicas {
			rep.mu.Lock()
			reps = append(reps, map[string]any{"url": rep.url, "up": rep.up.Load(), "inflight": rep.inflight.Load(), "last_error": rep.lastErr})
			rep.mu.Unlock()
		}
		g.mu.RUnlock()
		live := g.live()
		if live == 0 {
			missing = append(missing, i)
		}
		shards[i] = map[string]any{"index": i, "first_row": g.firstRow, "rows": g.rows, "live": live, "replicas": reps, "hedge_after_ms": float64(g.hedgeDelay().Microseconds()) / 1000}
	}
	var refused []map[string]any
	for _, rep := range r.allReplicas() {
		rep.mu.Lock()
		if rep.refused != "" {
			refused = append(refused, map[string]any{"url": rep.url, "reason": rep.refused})
		}
		rep.mu.Unlock()
	}
	return map[string]any{
		"backend": "router",
		"index":   fmt.Sprintf("router over %d shards", len(r.shards)),
		"router": map[string]any{
			"build_id": r.want.BuildID, "corpus_sha256": r.want.CorpusSHA256, "shards": shards,
			"on_missing_shard": r.cfg.OnMissingShard, "missing_shards": missing, "degraded": len(missing) > 0, "refused": refused,
		},
	}
}

var _ rlsearch.PrefixStabler = (*remote)(nil)
