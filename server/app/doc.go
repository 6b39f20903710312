// Package app assembles what `rlsearch serve` serves, so that the CLI, the
// bench (which starts the same server in-process) and tests build it one
// way: the index with its encoder, the e5 batching queue, the reranker, the
// policy tokenizer, the program runtime, the hybrid collections, the
// rewards, every endpoint over them and the rollout inspector at /ui/
// (server owns the HTTP). Unless
// Config.CacheBytes is rlsearch.Off, one result cache (package server/cache) sits in front
// of every retriever, so /retrieve, programs, mutate and the retrieval
// reward (NewSearcher) share it; its metrics join /metrics
// (server.Config.Collectors) and its state /healthz.
//
// New opens everything a Config names and returns a Service whose Close
// releases it; on error nothing stays open. Configuration mistakes (a
// default retriever the index does not serve, a negative body limit) wrap
// ErrConfig and name the `rlsearch serve` flag of the field, since the CLI
// is how most users set them. No build tags; the encoder and reranker need
// ONNX Runtime only when their model directories are set.
//
// NewRouter assembles the same endpoints over a router (package
// server/router) instead of an index: `rlsearch serve --shards URL,...`.
// An index that is one shard of a sharded build also serves the shard
// endpoints a router calls.
//
// Floors: app is the top of the serving tree, just under cmd/: it may
// import the domain packages, server and server/router; only cmd/ imports
// it (the bench starts its in-process server through cmd/rlsearch).
//
// Example (what `rlsearch serve --index idx --collections cols` does):
//
//	svc, err := app.New(ctx, app.Config{
//		Index:       app.IndexConfig{Dir: "idx"},
//		Collections: "cols",
//		Reranker:    app.RerankConfig{Check: true},
//	})
//	if err != nil {
//		return err
//	}
//	defer svc.Close()
//	return svc.ListenAndServe(ctx, "127.0.0.1:8000", nil)
package app
