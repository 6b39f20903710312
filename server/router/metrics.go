package router

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the router's Prometheus metrics, all labelled by shard
// (its index) and, where it matters, replica (its base URL).
type metrics struct {
	attempts   *prometheus.CounterVec   // shard, replica, outcome: ok, error, client_error
	latency    *prometheus.HistogramVec // shard: successful attempts
	retries    *prometheus.CounterVec   // shard
	hedges     *prometheus.CounterVec   // shard
	hedgeWins  *prometheus.CounterVec   // shard
	missing    *prometheus.CounterVec   // shard, policy: fail or partial
	up         *prometheus.GaugeVec     // shard, replica
	refused    *prometheus.GaugeVec     // replica
	rejected   prometheus.Counter       // fan-outs over MaxInFlight
	inFlight   prometheus.Gauge
	docFetches prometheus.Counter // documents fetched by row (cache misses)
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	buckets := prometheus.ExponentialBuckets(0.0005, 2, 17)
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_router_shard_requests_total",
			Help: "Requests the router sent to shard replicas, by shard, replica and outcome (ok, error, client_error).",
		}, []string{"shard", "replica", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rlsearch_router_shard_request_duration_seconds",
			Help:    "Latency of successful shard requests by shard.",
			Buckets: buckets,
		}, []string{"shard"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_router_retries_total",
			Help: "Shard requests sent again after a failed attempt, by shard.",
		}, []string{"shard"}),
		hedges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_router_hedges_total",
			Help: "Hedged shard requests (a second replica asked because the first was slow), by shard.",
		}, []string{"shard"}),
		hedgeWins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_router_hedge_wins_total",
			Help: "Hedged shard requests that answered first, by shard.",
		}, []string{"shard"}),
		missing: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_router_missing_shard_total",
			Help: "Fan-outs in which a shard had no answer (no live replica, or none within the deadline), by shard and policy: fail (the request failed with 503) or partial (answered from the other shards, flagged).",
		}, []string{"shard", "policy"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rlsearch_router_replica_up",
			Help: "1 when the replica is live (its /healthz answers with the router's build), else 0.",
		}, []string{"shard", "replica"}),
		refused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rlsearch_router_replica_refused",
			Help: "1 for an endpoint the router refuses to route to (another build or corpus, or not a shard server).",
		}, []string{"replica"}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rlsearch_router_rejected_total",
			Help: "Fan-outs refused with 503 because --router-max-inflight were running.",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rlsearch_router_inflight",
			Help: "Fan-outs running.",
		}),
		docFetches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rlsearch_router_doc_fetches_total",
			Help: "Documents fetched from a shard by row because the router's document cache did not hold them.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.attempts, m.latency, m.retries, m.hedges, m.hedgeWins, m.missing, m.up, m.refused, m.rejected, m.inFlight, m.docFetches} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("router: register metrics: %w", err)
			}
		}
	}
	return m, nil
}
