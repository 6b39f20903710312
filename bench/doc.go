// Package bench measures retrieval quality and speed on real data.
//
// Quality: recall@k and MRR of gold passages for question sets such as
// ../shared/data/wiki_multihop/questions.jsonl (EvalRecall). Recall@k "any
// gold" is the fraction of questions with at least one gold passage in the
// top k; "all gold" the fraction with every gold passage in the top k (the
// multi-hop standard, since a 2-hop question needs both). MRR@k is the mean
// reciprocal rank of the first gold passage within the top k (0 when none
// is there).
//
// Speed: the framework of `rlsearch-bench run`. A Suite sets up Cases; Run
// measures every case Options.Reps times (rep-major, Measure: throughput,
// nearest-rank p50/p95/p99 per call, sampled latencies), then the peers
// registered for the suite (RegisterPeer, AdaptRunner), and returns a
// Report (environment, options, every repetition as []Row, skip reasons).
// Row and Rep (result.go) are the file contract with peer runners: a JSON
// array of Row (ReadRows). The suites are in bench/suites, report.md, the
// plots and `bench compare` in bench/report, the single-index measurement
// of `rlsearch-bench index --index` in bench/indexbench; bench/README.md
// documents the command.
//
//	rep, err := bench.Run(ctx, bench.Options{Suites: []string{"bm25"}, Data: "../shared/data", Work: "out/bench-work"}, suites.All())
//
// No cgo. Functions here are safe for concurrent use unless noted; Run
// changes GOMAXPROCS while a case that sets Threads runs, so run one Run
// at a time in a process.
package bench
