// Package loadgen is an open-loop HTTP load generator: requests start at
// scheduled arrival times (uniform or Poisson) whatever the server's speed,
// with a cap on requests in flight, bounded in count and in time; and a
// rate search that finds the highest request rate whose p99 latency stays
// under a bound (the `serve` suite of `rlsearch-bench run`).
//
// Latency is measured from a request's scheduled arrival, not from when a
// connection slot freed up: a request that waited for the concurrency cap
// counts its wait, so an overloaded server shows as growing latency rather
// than as a quietly lowered rate ("coordinated omission", Tene 2013).
//
// RunClosed is the closed-loop counterpart: a fixed number of clients,
// each sending its next request when the previous one is answered, with
// latency from send to answer (what a trainer's pool of rollout workers
// sees; the `bench-shards` and router fault tests use it).
//
// No cgo. Run and RunClosed may be called concurrently with different
// configs.
//
// Example (what the serve suite of bench/peers does):
//
//	res, err := loadgen.Search(ctx, loadgen.SearchConfig{
//		Base: loadgen.Config{URL: "http://127.0.0.1:8000/retrieve", Body: body, Duration: 2 * time.Second},
//	}, nil)
//	// res.Best: highest rate (requests/s) with p99 ≤ 100 ms and no errors
package loadgen
