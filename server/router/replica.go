package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// replica is one shard server (one address). Its state changes under mu;
// up and inflight are read on every request without it.
type replica struct {
	url string // base URL, http://address:port
	src string // the configured endpoint it was resolved from

	up         atomic.Bool
	inflight   atomic.Int64
	fails      atomic.Int32 // consecutive failed attempts
	probeFails atomic.Int32 // consecutive failed health checks

	mu        sync.Mutex
	id        *Identity // nil until a probe succeeded
	refused   string    // non-empty: never routed to (why)
	lastErr   string
	lastProbe time.Time
	gone      bool // no longer resolved from src
}

// health is what a replica's GET /healthz says that the router uses.
type health struct {
	Status     string   `json:"status"`
	Retrievers []string `json:"retrievers"`
	// PrefixStable names the retrievers whose top-k lists are cuts of
	// their wider lists (exact ones; absent from older servers: none).
	PrefixStable []string  `json:"prefix_stable"`
	NumDocs      int       `json:"num_docs"`
	Shard        *Identity `json:"shard"`
}

// probe reads the replica's /healthz within timeout.
func (r *Router) probe(ctx context.Context, rep *replica, timeout time.Duration) (*health, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rep.url+"/healthz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	var h health
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("GET /healthz: %v", err)
	}
	return &h, nil
}

// why a replica's health does not fit the router's build; "" when it fits.
// want is nil before the build is known.
func mismatch(h *health, want *Identity) string {
	s := h.Shard
	switch {
	case s == nil:
		return "not a shard server: its /healthz has no \"shard\" (serve a shard directory built with rlsearch index --shards)"
	case s.Count < 1 || s.Index < 0 || s.Index >= s.Count || s.BuildID == "" || s.Rows < 1 || s.FirstRow < 0 || s.FirstRow+s.Rows > s.TotalRows:
		return fmt.Sprintf("its /healthz describes an impossible shard %+v", *s)
	case want == nil:
		return ""
	case s.BuildID != want.BuildID:
		return fmt.Sprintf("serves build %s (corpus %s) but the router serves build %s (corpus %s): another corpus or another build", short(s.BuildID), short(s.CorpusSHA256), short(want.BuildID), short(want.CorpusSHA256))
	case s.Count != want.Count || s.TotalRows != want.TotalRows:
		return fmt.Sprintf("is shard %d of %d over %d rows, the router's build has %d shards over %d rows", s.Index, s.Count, s.TotalRows, want.Count, want.TotalRows)
	}
	return ""
}

func short(s string) string { return s[:min(len(s), 12)] }

// isRefused reports whether err is a refused connection (nothing listens):
// the replica is down, no need to wait for a second failure.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// resolve returns the replica URLs of a configured endpoint: one per
// address of its host (or the endpoint itself for an IP literal or with
// NoResolve).
func (r *Router) resolve(ctx context.Context, endpoint string) ([]string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if r.cfg.NoResolve || net.ParseIP(host) != nil {
		return []string{endpoint}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := r.cfg.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	slices.Sort(addrs)
	out := make([]string, 0, len(addrs))
	for _, a := range slices.Compact(addrs) {
		out = append(out, u.Scheme+"://"+net.JoinHostPort(a, port))
	}
	return out, nil
}

// discover resolves every endpoint and adds the replicas not known yet;
// replicas no longer resolved are marked gone (and dropped once down). It
// keeps the previous addresses of an endpoint whose resolution fails.
func (r *Router) discover(ctx context.Context) {
	for _, e := range r.cfg.Endpoints {
		urls, err := r.resolve(ctx, e)
		if err != nil {
			r.log.Warn("router: resolve shard endpoint", "endpoint", e, "err", err)
			continue
		}
		r.mu.Lock()
		for _, u := range urls {
			if _, ok := r.replicas[u]; !ok {
				r.replicas[u] = &replica{url: u, src: e}
			}
		}
		for _, rep := range r.replicas {
			if rep.src == e {
				rep.mu.Lock()
				rep.gone = !slices.Contains(urls, rep.url)
				rep.mu.Unlock()
			}
		}
		r.mu.Unlock()
	}
}

// allReplicas returns the known replicas sorted by URL.
func (r *Router) allReplicas() []*replica {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*replica, 0, len(r.replicas))
	for _, rep := range r.replicas {
		out = append(out, rep)
	}
	slices.SortFunc(out, func(a, b *replica) int {
		if a.url < b.url {
			return -1
		}
		if a.url > b.url {
			return 1
		}
		return 0
	})
	return out
}

// check probes rep and updates its state: live when its /healthz answers
// with the router's build (it then serves its shard: joined or rejoined),
// refused when it serves another build, down otherwise.
//
// A failed health check marks the replica down when nothing listens
// (connection refused) or at the second failure in a row: a busy server
// may answer one /healthz late while it still answers requests.
func (r *Router) check(ctx context.Context, rep *replica) {
	h, err := r.probe(ctx, rep, r.cfg.HealthTimeout)
	rep.mu.Lock()
	defer rep.mu.Unlock()
	rep.lastProbe = time.Now()
	if err != nil {
		rep.lastErr = err.Error()
		if n := rep.probeFails.Add(1); isRefused(err) || n >= 2 {
			r.setUp(rep, false, "health check failed", err.Error())
		}
		return
	}
	rep.probeFails.Store(0)
	why := mismatch(h, r.want)
	if why == "" {
		if g := r.shards[h.Shard.Index]; h.Shard.FirstRow != g.firstRow || h.Shard.Rows != g.rows {
			why = fmt.Sprintf("is shard %d with rows from %d (%d rows), but the build's shard %d has rows from %d (%d rows)", h.Shard.Index, h.Shard.FirstRow, h.Shard.Rows, g.index, g.firstRow, g.rows)
		}
	}
	if why == "" && rep.id != nil && rep.id.Index != h.Shard.Index {
		// The address now serves another shard (a pod's IP given to
		// another pod): move it.
		r.log.Info("router: replica changed shard", "replica", rep.url, "was", rep.id.Index, "now", h.Shard.Index)
		r.setUp(rep, false, "changed shard", "")
		r.shards[rep.id.Index].remove(rep)
		r.metrics.up.DeleteLabelValues(strconv.Itoa(rep.id.Index), rep.url)
		rep.id = nil
	}
	if why == "" && !slices.Equal(slices.Sorted(slices.Values(h.Retrievers)), r.retrievers) {
		why = fmt.Sprintf("serves retrievers %v, the router's shards %v (start every shard with the same --model)", h.Retrievers, r.retrievers)
	}
	if why == "" && !slices.Equal(slices.Sorted(slices.Values(h.PrefixStable)), r.stable) {
		why = fmt.Sprintf("serves exact (prefix-stable) retrievers %v, the router's shards %v (start every shard with the same --dense-backend)", h.PrefixStable, r.stable)
	}
	if why != "" {
		if rep.refused == "" {
			r.log.Error("router: refusing replica", "replica", rep.url, "why", why)
			r.metrics.refused.WithLabelValues(rep.url).Set(1)
		}
		rep.refused, rep.lastErr = why, why
		r.setUp(rep, false, "refused", why)
		return
	}
	if rep.refused != "" {
		r.metrics.refused.WithLabelValues(rep.url).Set(0)
		rep.refused = ""
	}
	if rep.id == nil {
		id := *h.Shard
		rep.id = &id
		r.shards[id.Index].add(rep)
	}
	rep.lastErr = ""
	rep.fails.Store(0)
	r.setUp(rep, true, "health check passed", "")
}

// setUp records a replica's liveness, logging and counting transitions.
// rep.mu is held.
func (r *Router) setUp(rep *replica, up bool, why, detail string) {
	if rep.up.Swap(up) == up {
		return
	}
	shard := "?"
	if rep.id != nil {
		shard = strconv.Itoa(rep.id.Index)
		r.metrics.up.WithLabelValues(shard, rep.url).Set(map[bool]float64{true: 1}[up])
	}
	if up {
		r.log.Info("router: replica up", "shard", shard, "replica", rep.url, "why", why)
	} else {
		r.log.Warn("router: replica down", "shard", shard, "replica", rep.url, "why", why, "err", detail)
	}
}

// failed records a failed attempt on rep: down at once when nothing
// listens, else after two failures in a row (one reset connection is not
// enough to stop routing to an only replica). The health loop brings it
// back.
func (r *Router) failed(rep *replica, err error) {
	n := rep.fails.Add(1)
	if isRefused(err) || n >= 2 {
		rep.mu.Lock()
		rep.lastErr = err.Error()
		r.setUp(rep, false, "request failed", err.Error())
		rep.mu.Unlock()
	}
}

// healthLoop probes every replica every HealthInterval and resolves the
// endpoints again every ResolveInterval, until ctx is done.
func (r *Router) healthLoop(ctx context.Context) {
	defer close(r.loopDone)
	tick := time.NewTicker(r.cfg.HealthInterval)
	defer tick.Stop()
	lastResolve := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if time.Since(lastResolve) >= r.cfg.ResolveInterval {
			r.discover(ctx)
			lastResolve = time.Now()
			r.dropGone()
		}
		var wg sync.WaitGroup
		for _, rep := range r.allReplicas() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.check(ctx, rep)
			}()
		}
		wg.Wait()
	}
}

// dropGone forgets replicas that are no longer resolved and are down.
func (r *Router) dropGone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for u, rep := range r.replicas {
		rep.mu.Lock()
		drop := rep.gone && !rep.up.Load()
		rep.mu.Unlock()
		if drop {
			delete(r.replicas, u)
			if rep.id != nil {
				r.shards[rep.id.Index].remove(rep)
				r.metrics.up.DeleteLabelValues(strconv.Itoa(rep.id.Index), rep.url)
			}
			r.log.Info("router: replica gone from DNS", "replica", u)
		}
	}
}

// shardGroup is one shard's replicas and its recent latencies.
type shardGroup struct {
	index, firstRow, rows int
	label                 string // index as a metric label

	mu       sync.RWMutex
	replicas []*replica
	next     atomic.Uint64 // round-robin start

	latMu sync.Mutex
	lat   [hedgeSamples]time.Duration
	nlat  int
}

// hedgeSamples is the window of recent latencies the adaptive hedge
// delay is the 95th percentile of.
const hedgeSamples = 128

func (g *shardGroup) add(rep *replica) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !slices.Contains(g.replicas, rep) {
		g.replicas = append(g.replicas, rep)
	}
}

func (g *shardGroup) remove(rep *replica) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.replicas = slices.DeleteFunc(g.replicas, func(x *replica) bool { return x == rep })
}

// pick returns the replica to ask next: among those not in tried, a live
// one with the fewest requests in flight (round robin among equals), else
// one marked down (a down replica may have recovered since its last health
// check; a killed one refuses the connection at once, so trying it costs
// nothing). When every replica was tried and again is set, the best of
// them again. Refused replicas are never picked; nil when none is left.
func (g *shardGroup) pick(tried []*replica, again bool) *replica {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := len(g.replicas)
	start := int(g.next.Add(1))
	var best, bestTried *replica
	better := func(a, b *replica) bool { // a before b
		if b == nil {
			return true
		}
		if ua, ub := a.up.Load(), b.up.Load(); ua != ub {
			return ua
		}
		return a.inflight.Load() < b.inflight.Load()
	}
	for i := range n {
		rep := g.replicas[(start+i)%n]
		rep.mu.Lock()
		refused := rep.refused != ""
		rep.mu.Unlock()
		if refused {
			continue
		}
		if slices.Contains(tried, rep) {
			if better(rep, bestTried) {
				bestTried = rep
			}
			continue
		}
		if better(rep, best) {
			best = rep
		}
	}
	if best == nil && again {
		return bestTried
	}
	return best
}

// live is the number of live replicas.
func (g *shardGroup) live() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := 0
	for _, rep := range g.replicas {
		if rep.up.Load() {
			n++
		}
	}
	return n
}

func (g *shardGroup) observe(d time.Duration) {
	g.latMu.Lock()
	g.lat[g.nlat%hedgeSamples] = d
	g.nlat++
	g.latMu.Unlock()
}

// hedgeDelay is the 95th percentile of the shard's recent latencies, at
// least minHedge; initialHedge until it has hedgeSamples/8 of them.
func (g *shardGroup) hedgeDelay() time.Duration {
	g.latMu.Lock()
	n := min(g.nlat, hedgeSamples)
	if n < hedgeSamples/8 {
		g.latMu.Unlock()
		return initialHedge
	}
	var buf [hedgeSamples]time.Duration
	copy(buf[:], g.lat[:n])
	g.latMu.Unlock()
	s := buf[:n]
	slices.Sort(s)
	return max(minHedge, s[(n*95+99)/100-1])
}

// succeeded records an answered attempt: a replica that answers is live,
// whatever its last health check said.
func (r *Router) succeeded(rep *replica) {
	rep.fails.Store(0)
	if !rep.up.Load() {
		rep.mu.Lock()
		if rep.refused == "" && rep.id != nil {
			rep.probeFails.Store(0)
			rep.lastErr = ""
			r.setUp(rep, true, "answered a request", "")
		}
		rep.mu.Unlock()
	}
}
