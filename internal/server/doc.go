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
// "topk" defaults to 3 (Search-R1's retrieval_topk), also when it is 0 (Search-R1:
// `if not request.topk`), "return_scores" to false,
// and "retriever" (our extension) to Config.Default. A JSON null counts as an
// absent field. Unknown fields are ignored, as clients send extras, except
// near-misses of the four known ones: a key that equals a known field once
// lower-cased and stripped of '_' and '-' ("top_k", "TopK", "returnScores",
// "Queries") is a 400 {"error": "unknown field \"top_k\": did you mean
// \"topk\"?", "field": "top_k"} rather than a silent default.
//
// The body must be UTF-8 (a 400 with field "" gives the byte offset of the
// first invalid byte; encoding/json would turn it into U+FFFD). A missing
// Content-Type, application/json, any +json type and text/plain are
// accepted; forms (application/x-www-form-urlencoded, multipart/*), XML
// and HTML get 415 with field "Content-Type" — what curl -d sends without
// -H 'Content-Type: application/json'.
//
// Limits per request, each with a Config field: "topk" ≤ 1000
// (MaxTopK), ≤ 32,768 queries (MaxQueries), a body of ≤ 16 MiB
// (MaxBodyBytes), and ≤ 327,680 hits, len("queries") × topk
// (MaxResults), so that a 50 KB body cannot ask for gigabytes while the
// 16,384 queries at topk 10 of a large Search-R1 run pass.
//
// Large requests stay bounded in memory: the queries are searched
// ChunkQueries (1,024) at a time and each chunk's hits are checked and kept
// as a flat array of (row, score), 8 bytes a hit; then the response is
// streamed, each document fetched and encoded as it is written, 64 KiB at a
// time. Every query is searched and every score checked before the first
// byte, so a retrieval error is always a proper status with the JSON error
// body. Only a document-store failure after the first 64 KiB of output
// (a damaged docstore block) cannot change the status line any more: the
// connection is then aborted, so the client sees a broken response, never a
// truncated 200. Served by
// ListenAndServe, a request must arrive, headers and body, within 60 s
// (ReadTimeout; headers within 10 s) or it gets 408 and its connection is
// closed; there is no write timeout, so a long retrieval is never cut. On
// cancellation ListenAndServe drains in-flight requests for up to 30 s
// (ShutdownTimeout) and returns an error if any remain.
//
// Bad input is always a 4xx with a JSON body {"error": "...", "field": "..."}
// naming the offending field ("" for the body as a whole), never a 5xx:
// verl's search tool retries every 5xx ten times. Statuses: 400 for a
// malformed body or field and for retriever errors wrapping
// rlsearch.ErrBadInput, 404 for an unknown path, 405 (with Allow) for a
// wrong method, 408 for a body not received within Config.ReadTimeout,
// 413 for a body over Config.MaxBodyBytes, more than Config.MaxQueries
// queries or more than Config.MaxResults hits (field "topk"), 415 for a
// non-JSON Content-Type, 499 when the client went away, 503 on a context
// deadline, and 500 only for real faults (a retriever or document
// store error, a NaN or infinite score — a model fault, named with the
// query —, a recovered panic), always with the same JSON body.
//
// Blank (empty or whitespace-only) queries get an empty list without
// reaching the retriever, and hits with padding rows (< 0) or repeated rows
// are dropped, so "topk" beyond the corpus returns each match once.
// Scores are float32 widened to float64, written as encoding/json writes a
// float64; no NaN or infinity ever leaves the server.
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
