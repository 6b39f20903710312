package bench

import "time"

// Row is one measured configuration of one system in a bench report: ours
// ("rlsearch") or a peer ("lucene-8.7", "faiss-1.7.3-avx2",
// "python-searchr1", "cpython"). Rows of the same Suite and Config from
// different systems are compared as ratios (ours / peer) by the report.
//
// The JSON form of []Row is the file contract between `rlsearch-bench run` and
// the peer runners under bench/peers: a peer writes a JSON array of Row.
type Row struct {
	// Suite names the measurement set: bm25, flat, hnsw, encode, rerank,
	// programs, mutate, hybrid, rewards, gpu, serve.
	Suite string `json:"suite"`
	// System is who was measured: "rlsearch" or the peer's name with its version.
	System string `json:"system"`
	// Config is the comparable configuration key, the same string for ours
	// and the peer (e.g. "top10 threads=1 batch=64 n=100000 dim=384").
	Config string `json:"config"`
	// Params holds the configuration as values (threads, batch, k, n, dim, ef, rate...).
	Params map[string]any `json:"params,omitempty"`
	// Unit of Rep.Throughput: "queries/s", "passages/s", "pairs/s",
	// "programs/s", "mutations/s", "requests/s".
	Unit string `json:"unit"`
	// Reps are the repetitions, in the order they ran (at least one).
	Reps []Rep `json:"reps"`
	// Note is free text shown under the table (e.g. "scalar HNSW distances").
	Note string `json:"note,omitempty"`
}

// Rep is one repetition of a Row's measurement.
type Rep struct {
	Throughput float64 `json:"throughput"`
	// Latency percentiles of single operations, in milliseconds (0 when not measured).
	P50ms float64 `json:"p50_ms,omitempty"`
	P95ms float64 `json:"p95_ms,omitempty"`
	P99ms float64 `json:"p99_ms,omitempty"`
	// Errors counts failed operations (requests answered non-2xx, timeouts).
	Errors int `json:"errors,omitempty"`
	// Ops is the number of operations the repetition measured.
	Ops int64 `json:"ops,omitempty"`
	// Elapsed is the wall time of the repetition.
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
	// CPU is the process's CPU time (user + system, every thread: for a
	// peer, its Python process with faiss's OpenMP threads) over the same
	// timed loop, 0 when not measured. CPU / Ops is the work per operation,
	// which a loaded machine disturbs far less than the wall-clock rate.
	CPU time.Duration `json:"cpu_ns,omitempty"`
	// Extra holds suite-specific values: "recall@10", "rss_mb", "achieved_rate" ...
	Extra map[string]float64 `json:"extra,omitempty"`
	// Latencies optionally carries per-operation latencies in milliseconds
	// (sampled, at most a few thousand) for latency CDF plots.
	Latencies []float64 `json:"latencies_ms,omitempty"`
}
