package server

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch/internal/recovered"
)

// Endpoint labels. Paths outside these share "other" so that scanners
// cannot blow up the label cardinality.
const (
	endpointRetrieve = "/retrieve"
	endpointHealthz  = "/healthz"
	endpointMetrics  = "/metrics"
	endpointOther    = "other"
)

// Error kinds, the "kind" label of rlsearch_http_errors_total.
const (
	kindBadRequest     = "bad_request"     // malformed or invalid request (400)
	kindTooLarge       = "too_large"       // body or batch over a limit (413)
	kindMethod         = "method"          // wrong HTTP method (405)
	kindMediaType      = "media_type"      // non-JSON Content-Type (415)
	kindReadTimeout    = "read_timeout"    // body not received within Config.ReadTimeout (408)
	kindNotFound       = "not_found"       // unknown path (404)
	kindRetrieverInput = "retriever_input" // retriever returned rlsearch.ErrBadInput (400)
	kindCanceled       = "canceled"        // client went away (499)
	kindDeadline       = "deadline"        // context deadline exceeded (503)
	kindOverloaded     = "overloaded"      // rlsearch.ErrOverloaded (503)
	kindInternal       = "internal"        // retriever, doc source or encoding failure (500)
	kindPanic          = "panic"           // recovered panic (500)
	kindWrite          = "write"           // writing the response failed (client gone)
	statusClientClosed = 499               // nginx's "client closed request"
)

type metrics struct {
	requests   *prometheus.CounterVec   // endpoint, code
	latency    *prometheus.HistogramVec // endpoint
	batchSize  prometheus.Histogram
	errors     *prometheus.CounterVec   // kind
	retrieval  *prometheus.HistogramVec // retriever
	queriesTot *prometheus.CounterVec   // retriever
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	// Latency buckets from 0.5 ms to ~33 s, factor 2: retrieval is
	// sub-millisecond for BM25 on small corpora and seconds for large
	// E5 batches on CPU.
	latencyBuckets := prometheus.ExponentialBuckets(0.0005, 2, 17)
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_http_requests_total",
			Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rlsearch_http_request_duration_seconds",
			Help:    "HTTP request latency by endpoint, from the handler's start to its return.",
			Buckets: latencyBuckets,
		}, []string{"endpoint"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rlsearch_retrieve_queries_per_request",
			Help:    "Number of queries per valid /retrieve request.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 16), // 1 .. 32768
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_http_errors_total",
			Help: "Failed HTTP requests by kind (bad_request, too_large, method, media_type, read_timeout, not_found, retriever_input, canceled, deadline, overloaded, internal, panic, write).",
		}, []string{"kind"}),
		retrieval: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rlsearch_retrieval_duration_seconds",
			Help:    "Latency of one Retrieve call (a request's non-blank queries, at most Config.ChunkQueries of them; with a Batcher, queue wait included) by retriever.",
			Buckets: latencyBuckets,
		}, []string{"retriever"}),
		queriesTot: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_retrieval_queries_total",
			Help: "Queries sent to each retriever.",
		}, []string{"retriever"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.batchSize, m.errors, m.retrieval, m.queriesTot} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: register metrics: %w", err)
		}
	}
	if err := recovered.Register(reg); err != nil {
		return nil, fmt.Errorf("server: register metrics: %w", err)
	}
	return m, nil
}
