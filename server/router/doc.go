// Package router is the serving mode of `rlsearch serve --shards URL,...`:
// one process that answers the same HTTP API as a server over one index
// (/retrieve, programs, mutate, /healthz; assembled by server/app) by
// fanning every retrieval out to the shard servers of a sharded build
// (`rlsearch index --shards N`) and merging their answers, so that the
// answers equal, byte for byte, those of one server over the unsharded
// index.
//
// # Shards and replicas
//
// A shard server is `rlsearch serve --index DIR/shard-I-of-N`; its
// /healthz says which shard of which build it serves (Identity), and it
// mounts the endpoints of ShardService (/v1/shard/retrieve, the shard's top
// k with corpus rows, float32 scores and documents; /v1/shard/docs,
// documents by corpus row). Config.Endpoints lists the shard servers in
// any order: a host name resolving to several addresses (a Kubernetes
// headless Service over the shard pods) gives one replica per address,
// resolved again every ResolveInterval, and each replica is grouped under
// the shard its /healthz reports. New refuses endpoints that serve another
// build or corpus (ErrBuild), and waits until every shard has a live
// replica; a replica of another build that appears later is refused and
// counted, never routed to. Every replica must also list the same
// retrievers, and the same ones in its /healthz "prefix_stable" (served
// exactly: BM25, flat dense search); the router's retriever of such a
// name is rlsearch.PrefixStable, so the program coalescer and the mutation
// verifier share one wide search among narrower calls through a router
// exactly as they do on one server.
//
// # Exact merge
//
// BM25 shards score with the corpus-wide statistics (package bm25,
// Shards) and their vector files hold the same rows of the same vectors, so a
// shard's scores are the one index's float32 values. Each shard returns
// its top k; the router keeps the k best of their union by descending
// score, ties by ascending corpus row, the order of one index
// (rlsearch.CompareHits). Scores cross the wire as JSON numbers that read
// back to the same float32. This holds for the exact backends (BM25, flat
// dense search); an approximate dense backend (--dense-backend hnsw) has one
// graph per shard, whose merged top k approximates the exact answer as the
// unsharded graph does but need not equal it, so byte equality is not
// claimed for it.
//
// # Faults
//
// Each shard's part of a request has a deadline (ShardTimeout +
// PerQueryTimeout × queries). A failed attempt (connection error, 5xx) is
// retried on another replica (Retries); a request of at most
// HedgeMaxQueries queries that a replica has not answered within the hedge
// delay (HedgeAfter, or the shard's recent 95th percentile) is also sent
// to another replica, and the first answer wins. A replica is marked down
// when nothing listens or after two failed health checks (or requests) in
// a row, and live again at its next good health check or answer, so a
// restarted shard rejoins without a router restart. A shard with no
// answer within its deadline is handled by OnMissingShard: Fail (default)
// answers 503 with Retry-After and an error naming the shard, also for
// programs, whose runtime would otherwise answer 200 with an error
// observation (server.MarkUnavailable); Partial answers from the other
// shards and flags the answer (server.MarkPartial: the X-Rlsearch-Partial
// header, and "partial" beside "result" in /retrieve), counted in
// rlsearch_router_missing_shard_total. At most MaxInFlight fan-outs run at
// once (more get 503 at once); connections to a replica are kept alive and
// reused, at most MaxConnsPerReplica of them.
//
// # Metrics and health
//
// rlsearch_router_* metrics (per shard and replica: requests by outcome,
// latency, retries, hedges and hedge wins, missing shards by policy,
// replica up, refused endpoints, rejected fan-outs, documents fetched by
// row) go to Config.Registry, the server's /metrics. Router.Health is the
// router's part of /healthz: the build, the policy, and per shard its rows,
// live replicas, each replica's state and last error, the hedge delay.
//
// # Floors
//
// router sits in the serving tree above package server, whose Endpoint,
// DocRetriever and request notes it uses, and below server/app, which
// assembles it; it imports the root package and server only (no index,
// sdk or model: the shards hold those). Nothing outside server/app and
// cmd/ imports it.
//
// A Router is safe for concurrent use. No cgo, no build tags; CPU and GPU
// shards look the same to it.
//
// Example (what `rlsearch serve --shards` does, through server/app):
//
//	svc, err := app.NewRouter(ctx, app.RouterConfig{Router: router.Config{
//		Endpoints: []string{"http://rlsearch-shards.ml.svc.cluster.local:8000"},
//	}})
//	if err != nil {
//		return err // ErrBuild: the endpoints serve different builds
//	}
//	defer svc.Close()
//	return svc.ListenAndServe(ctx, "0.0.0.0:8000", nil)
package router
