// Package server serves the retrieval backend over HTTP with the exact
// request and response shapes of Search-R1's retrieval server, so that
// Search-R1's and verl's search clients work unchanged.
//
// Endpoints:
//
//	POST /retrieve  {"queries": [str], "topk": int, "return_scores": bool, "retriever": str}
//	GET  /healthz   {"status": "ok", "retrievers": [...], "default": str, "num_docs": N, ...}
//	GET  /metrics   Prometheus text exposition of the server's registry
//
// /retrieve answers {"result": [[{"document": {"id", "contents"}, "score"}, ...], ...]}
// with one inner list per query when return_scores is true, and
// {"result": [[{"id", "contents"}, ...], ...]} (bare documents) when it is false.
// "topk" defaults to 3 (Search-R1's retrieval_topk), "return_scores" to false,
// and "retriever" (our extension) to Config.Default. A JSON null counts as an
// absent field; unknown fields are ignored, as clients send extras.
//
// Bad input is always a 4xx with a JSON body {"error": "...", "field": "..."}
// naming the offending field ("" for the body as a whole), never a 5xx:
// verl's search tool retries every 5xx ten times.
//
// NewBatcher wraps an expensive retriever (the E5 encoder on a GPU) in a
// queue that merges concurrent calls into one underlying batch.
//
// The package has no cgo and no build tags; it does the same on CPU and GPU
// hosts, since the retrievers it is given decide where the work runs.
//
// Example:
//
//	srv, err := server.New(server.Config{
//		Retrievers: map[string]rlsearch.Retriever{"bm25": bm25, "e5": server.NewBatcher(e5, 512, 2*time.Millisecond)},
//		Default:    "e5",
//		Docs:       docs,
//	})
//	if err != nil {
//		return err
//	}
//	return srv.ListenAndServe(ctx, ":8000", func(a net.Addr) { log.Printf("listening on %s", a) })
package server
