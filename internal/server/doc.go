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
// verl's search tool retries every 5xx ten times. Statuses: 400 for a
// malformed body or field and for retriever errors wrapping
// rlsearch.ErrBadInput, 404 for an unknown path, 405 (with Allow) for a
// wrong method, 413 for a body over Config.MaxBodyBytes or more than
// Config.MaxQueries queries, 499 when the client went away, 503 on a
// context deadline, and 500 only for real faults (a retriever or document
// store error, a recovered panic), always with the same JSON body.
//
// Blank (empty or whitespace-only) queries get an empty list without
// reaching the retriever, and hits with padding rows (< 0) or repeated rows
// are dropped, so "topk" beyond the corpus returns each match once.
// Scores are float32 widened to float64, written as encoding/json writes a
// float64. Unlike Search-R1, topk 0 is an error rather than the default.
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
