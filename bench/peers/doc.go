// Package peers runs the systems users would pick instead of rlsearch, in
// the same `rlsearch-bench run` run and on the same inputs, and returns their
// measurements as bench.Row values keyed by the same Config strings as
// ours, so that the report can print ours/peer ratios:
//
//   - flat, hnsw: faiss 1.7.3 (bench/peers/faiss_peer.py) in two builds:
//     Debian's python3-faiss (generic x86-64: scalar HNSW distances) and
//     Debian's source rebuilt with FAISS_OPT_LEVEL=avx2
//     (bench/peers/setup-faiss-avx2.sh, `make bench-setup`; the fair peer),
//     each at 1 thread and at all cores, with Debian's OpenMP OpenBLAS and
//     OMP_WAIT_POLICY=PASSIVE.
//   - programs: CPython exec() of the same rollout programs over a stub SDK
//     (bench/peers/programs_peer.py), next to ours over the equivalent Go
//     stub: runtime overhead only.
//   - serve: a Search-R1-style FastAPI + uvicorn server with a Xapian BM25
//     route and a faiss IndexFlatIP dense route
//     (bench/peers/searchr1_server.py) next to `rlsearch serve`, both on
//     loopback under the open-loop load of package bench/loadgen: the
//     highest request rate whose p99 stays ≤ 100 ms, and latency at a
//     common rate, per route. The dense peer searches the passage vectors
//     of ours' vector file and encodes each request's queries with torch
//     (e5_torch.py: the E5 BertModel over the same weights' model.safetensors,
//     checked against ours by TestTorchEncoderAgrees), as Search-R1's
//     server does.
//
// The Python scripts are embedded and written to Options.WorkDir, so the
// rlsearch binary runs them from any directory. Available(suite) says what
// is missing and which make target installs it. Peers run under Debian's
// /usr/bin/python3; nothing here is needed by `make test`'s other packages.
//
// Run is not safe for concurrent use with itself (it sets GOMAXPROCS while
// it measures ours in the programs suite, and the suites load the machine).
//
//	rows, err := peers.Run(ctx, "hnsw", peers.Options{Quick: true}, os.Stderr)
package peers
