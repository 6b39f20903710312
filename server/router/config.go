package router

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Policies for a shard without a live replica (Config.OnMissingShard).
const (
	// Fail answers 503 with Retry-After naming the shard: the trainers'
	// clients (verl's search tool, Search-R1's, the integrations) retry.
	Fail = "fail"
	// Partial answers from the live shards; the response is flagged
	// (server.PartialHeader, and "partial" in /retrieve) and the request
	// counted in rlsearch_router_partial_total.
	Partial = "partial"
)

// Defaults of the zero fields of Config.
const (
	// DefaultShardTimeout is the deadline of one shard's part of a
	// request, retries and hedges included, before per-query time.
	DefaultShardTimeout = 10 * time.Second
	// DefaultPerQueryTimeout is added to the shard deadline per query of
	// a request: BM25 over a 21M-passage corpus answers about 40 queries/s
	// per core (bench/README.md), so 20 ms leaves a single-core wiki-18
	// shard room for its share of a large batch.
	DefaultPerQueryTimeout = 20 * time.Millisecond
	// DefaultHedgeMaxQueries is the most queries of a hedged request.
	DefaultHedgeMaxQueries = 16
	// DefaultRetries is how many more attempts a failed shard request gets
	// (on another replica when there is one).
	DefaultRetries = 2
	// DefaultHealthInterval is how often every replica's /healthz is read,
	// and DefaultHealthTimeout how long one read may take.
	DefaultHealthInterval = time.Second
	DefaultHealthTimeout  = 2 * time.Second
	// DefaultResolveInterval is how often host names are resolved again
	// (a headless Service's pods come and go).
	DefaultResolveInterval = 5 * time.Second
	// DefaultStartTimeout bounds New's wait for every shard.
	DefaultStartTimeout = 2 * time.Minute
	// DefaultMaxInFlight bounds concurrent fan-outs (one per Retrieve
	// call); past it calls fail at once with 503.
	DefaultMaxInFlight = 1024
	// DefaultMaxConnsPerReplica bounds the connections to one replica,
	// each reused (keep-alive); requests beyond wait for one.
	DefaultMaxConnsPerReplica = 64
	// DefaultDocCache is the documents kept for the program runtime's
	// lookups by row after a retrieval (about 0.7 KB each on wiki-18).
	DefaultDocCache = 100_000
	// minHedge and initialHedge bound the adaptive hedge delay: at least
	// 2 ms, and 20 ms until a shard has answered hedgeSamples times.
	minHedge, initialHedge = 2 * time.Millisecond, 20 * time.Millisecond
)

// Config configures New. Zero fields take the defaults above.
type Config struct {
	// Endpoints are the shard servers' base URLs (http://host:port), in
	// any order, replicas of a shard included: each reports its shard in
	// GET /healthz. A host name is resolved and every address is one
	// replica (a Kubernetes headless Service lists its pods), again every
	// ResolveInterval; with NoResolve the name is one replica (a ClusterIP
	// Service).
	Endpoints []string
	NoResolve bool
	// LookupHost resolves a host name to addresses; nil means
	// net.DefaultResolver.LookupHost (the system's DNS: a headless
	// Service's pods).
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// BuildID, when set, is the build every shard must serve; otherwise
	// the shards found at start must agree on one.
	BuildID string
	// OnMissingShard is Fail (default) or Partial.
	OnMissingShard string
	// ShardTimeout + PerQueryTimeout × queries is the deadline of one
	// shard's part of a request; a shard that has not answered by then
	// counts as missing (OnMissingShard).
	ShardTimeout, PerQueryTimeout time.Duration
	// Retries is the number of further attempts after a failed one
	// (connection error, 5xx): 0 means DefaultRetries (2), rlsearch.Off
	// (any negative value) none. `rlsearch serve --shard-retries` passes
	// its value through unchanged ("off" = rlsearch.Off).
	Retries int
	// HedgeAfter is how long a request waits for a replica before it also
	// asks another replica of the shard (the first answer wins, the other
	// request is cancelled): 0 means adaptive, the shard's recent 95th
	// percentile (at least 2 ms); NoHedge disables hedging. Only requests
	// of at most HedgeMaxQueries queries are hedged (0 means
	// DefaultHedgeMaxQueries): a hedged batch doubles its work, and the
	// tail that hurts is that of the small, interactive requests (verl's
	// search tool sends one query per call).
	HedgeAfter      time.Duration
	NoHedge         bool
	HedgeMaxQueries int
	// HealthInterval, HealthTimeout, ResolveInterval, StartTimeout: see
	// the defaults. A replica is marked down when nothing listens, or after
	// two failed health checks (or two failed requests) in a row; it is
	// live again at its next good health check or answered request.
	HealthInterval, HealthTimeout, ResolveInterval, StartTimeout time.Duration
	// MaxInFlight bounds concurrent fan-outs; MaxConnsPerReplica the
	// connections per replica.
	MaxInFlight, MaxConnsPerReplica int
	// DocCache is the number of documents cached for lookups by row.
	DocCache int
	// Registry receives the router's metrics (nil: none registered).
	Registry prometheus.Registerer
	// Logger receives replica state changes; nil means slog.Default().
	Logger *slog.Logger
}

// ErrConfig is wrapped by Validate's errors.
var ErrConfig = errors.New("router: bad configuration")

// Validate reports the first bad field, naming the `rlsearch serve` flag.
func (c *Config) Validate() error {
	if len(c.Endpoints) == 0 {
		return fmt.Errorf("%w: no shard endpoints (--shards URL,URL,...)", ErrConfig)
	}
	for _, e := range c.Endpoints {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("%w: --shards endpoint %q: want http://host:port (no path)", ErrConfig, e)
		}
	}
	switch c.OnMissingShard {
	case "", Fail, Partial:
	default:
		return fmt.Errorf("%w: --on-missing-shard %q: want %s or %s", ErrConfig, c.OnMissingShard, Fail, Partial)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--shard-timeout", c.ShardTimeout}, {"--shard-timeout-per-query", c.PerQueryTimeout}, {"--hedge-after", c.HedgeAfter},
		{"--shard-health-interval", c.HealthInterval}, {"--shard-health-timeout", c.HealthTimeout}, {"--shard-resolve-interval", c.ResolveInterval}, {"--shard-start-timeout", c.StartTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", ErrConfig, d.flag, d.v)
		}
	}
	if c.HedgeMaxQueries < 0 {
		return fmt.Errorf("%w: --hedge-max-queries %d is negative", ErrConfig, c.HedgeMaxQueries)
	}
	if c.MaxInFlight < 0 || c.MaxConnsPerReplica < 0 || c.DocCache < 0 {
		return fmt.Errorf("%w: --router-max-inflight %d, --router-max-conns %d and --router-doc-cache %d must be >= 0", ErrConfig, c.MaxInFlight, c.MaxConnsPerReplica, c.DocCache)
	}
	return nil
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.OnMissingShard == "" {
		c.OnMissingShard = Fail
	}
	def(&c.ShardTimeout, DefaultShardTimeout)
	def(&c.PerQueryTimeout, DefaultPerQueryTimeout)
	def(&c.HealthInterval, DefaultHealthInterval)
	def(&c.HealthTimeout, DefaultHealthTimeout)
	def(&c.ResolveInterval, DefaultResolveInterval)
	def(&c.StartTimeout, DefaultStartTimeout)
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	}
	c.HedgeMaxQueries = cmp.Or(c.HedgeMaxQueries, DefaultHedgeMaxQueries)
	c.MaxInFlight = cmp.Or(c.MaxInFlight, DefaultMaxInFlight)
	c.MaxConnsPerReplica = cmp.Or(c.MaxConnsPerReplica, DefaultMaxConnsPerReplica)
	c.DocCache = cmp.Or(c.DocCache, DefaultDocCache)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.LookupHost == nil {
		c.LookupHost = net.DefaultResolver.LookupHost
	}
	c.Endpoints = slices.Clone(c.Endpoints)
	for i, e := range c.Endpoints {
		c.Endpoints[i] = strings.TrimRight(e, "/")
	}
	return c
}
