// Package server is the one HTTP layer of the backend: it serves /retrieve
// with the exact request and response shapes of Search-R1's retrieval
// server (so that Search-R1's and verl's search clients work unchanged),
// /healthz, /metrics, and every other JSON endpoint, which the domain
// packages provide as plain functions (Serve(ctx, Request) (Response,
// error)) mounted through Config.Extra with JSON. No domain package imports
// net/http (reward and hybrid hold outbound clients only: the OpenAI judge
// and verbalizer), except inspect, whose read-only page is mounted through
// Config.Pages.
//
// Endpoints of `rlsearch serve` (Server.Paths lists what a server answers):
//
//	POST /retrieve              {"queries": [str], "topk": int, "return_scores": bool, "retriever": str}
//	GET  /healthz               {"status": "ok", "retrievers": [...], "prefix_stable": [...], "default": str, "num_docs": N, ...}
//	GET  /metrics               Prometheus text exposition of the server's registry
//	POST /rerank                rerank.Service.Serve (with --reranker; Search-R1's reranker contract)
//	POST /v1/programs/execute   sdk.Runtime.Serve
//	POST /v1/programs/mutate    sdk.Verifier.Serve
//	POST /v1/rewards/{qa,rpl,search-p1,proretrieval,retrieval}  reward.Service.Serve
//	POST /v1/hybrid/execute     hybrid.Service.Serve
//	GET  /ui/                   inspect.UI, the rollout inspector (Config.Pages; its own GET API)
//	     /mcp                   the MCP server (package server/mcp, mounted through Config.Pages)
//
// The other frameworks' dialects, each a thin adapter over /retrieve's one
// retrieval (search: same retrievers, cache, limits and cleaning), with
// the same body policy, plus MessagePack bodies (a map header as the
// first byte and no Content-Type, or application/msgpack; answered in
// MessagePack), decoded strictly: a field of another dialect is a 400
// naming it and where it belongs (dialect.go lists each dialect's
// upstream client):
//
//	POST /retrieve {"query", "topk", "return_scores"}   SkyRL: Search-R1's reply for one query (MessagePack: GEM's flat {"result": [...]})
//	POST /retrieve {"query", "top_k"|"k"}               rLLM: {"query", "results": [{"id", "content", "score", "document"}], "num_results"}
//	POST /queries  {"queries", "k"}                     R1-Searcher: {"queries", "answers": [[passage]]}
//	POST /search   {"query", "top_n", "return_score"}   ReCall: [{"id", "contents"}] or [docs, scores]; /batch_search for lists
//	POST /retrieve/rerank {"queries", "topk", "topk_retrieval"}  StepSearch: Config.Reranker over topk_retrieval candidates
//	POST /access   {"urls", "max_bytes", "max_tokens"}  ASearcher: {"result": [page | null]}, pages bounded (docpages.go)
//	GET  /health                                        rLLM: /healthz's body
//
// A listener profile (ProfileHandler; Corpora.Handler per listener)
// answers /retrieve where two dialects collide: ProfileBrowseComp gives
// BrowseComp-Plus's flat {"result": [{"document": {"title", "text"},
// "docid"}]} for {"query"}, ProfileASearcher adds "url" to every
// document. Corpora routes /c/NAME/... and the "corpus" of program and
// reward bodies to one Server per corpus; ServeListeners serves several
// listeners. Every answer ≥ 400 is counted in
// rlsearch_unanswered_requests_total{dialect, route, code} and logged,
// the first of a stream at once, then once per Config.UnansweredLogEvery
// (a minute) with how many followed and from which clients.
//
// One policy for every POST endpoint:
//
//   - Content-Type: missing, application/json, any +json type and
//     text/plain are accepted; forms (application/x-www-form-urlencoded,
//     multipart/*), XML and HTML get 415 with field "Content-Type" (what
//     curl -d sends without -H 'Content-Type: application/json'). Two
//     Content-Type headers, or one listing several types
//     ("application/json, text/html"), are a 400 with field
//     "Content-Type": the field is a singleton (RFC 9110 §8.3) and taking
//     the first would guess.
//
//   - Framing, decided by net/http before any handler runs (pinned by
//     TestAmbiguousFramingHeaders): identical duplicate Content-Length
//     headers count as one (RFC 9110 §8.6); differing ones get Go's plain
//     400; Transfer-Encoding chunked with a Content-Length is read as
//     chunked and the Content-Length dropped (RFC 9112 §6.3; the handler
//     cannot see that one was sent); two Transfer-Encoding headers or any
//     coding other than chunked get Go's 501. Those two answers are
//     net/http's text, not the JSON error body.
//
//   - Body limit per endpoint (EndpointOptions.MaxBodyBytes, /retrieve:
//     Config.MaxBodyBytes): over it, 413 "request body exceeds N bytes".
//
//   - Decoding (package jsonbody): UTF-8 only (encoding/json would turn
//     invalid bytes into U+FFFD), at most jsonbody.MaxDepth (64) nested
//     arrays and objects, exactly one JSON value and it must be an object:
//     a valid object followed by "]]]not json" or by a second object is a
//     400. Errors name the field's JSON path
//     ("programs[2].budgets.max_steps must be an integer, got string").
//
//   - Near-miss field names: a key that equals a known field once
//     lower-cased and stripped of '_' and '-' ("top_k", "TopK",
//     "returnScores", "Queries") is a 400 {"error": "unknown field
//     \"top_k\": did you mean \"topk\"?", "field": "top_k"} rather than a
//     silent default, on every endpoint and at every depth. Other unknown
//     keys pass on the Search-R1 contracts (/retrieve, /rerank) and the
//     reward endpoints, whose clients send extras, and are a 400 on
//     programs, mutate and hybrid.
//
//   - Errors: always the JSON body {"error": "...", "field": "..."} naming
//     the offending field ("" for the body as a whole), with Content-Type
//     application/json. The one error → status mapping (classify):
//
//     cause                                             status  kind in rlsearch_http_errors_total
//     bad field (*rlsearch.FieldError), rlsearch.ErrBadInput  400  bad_request (retriever_input: a retriever's, /retrieve)
//     unknown path                                        404  not_found
//     wrong method (Allow header)                         405  method
//     body not received within Config.ReadTimeout         408  read_timeout
//     body over the limit; rlsearch.ErrTooLarge (items)   413  too_large
//     non-JSON Content-Type                               415  media_type
//     client went away (context.Canceled)                 499  canceled
//     rlsearch.ErrOverloaded                              503  overloaded (Retry-After: 1)
//     context.DeadlineExceeded                            503  deadline (Retry-After: 1)
//     anything else, logged: our fault (model, index,     500  internal, panic
//     NaN score, encoding, recovered panic)
//
// verl's search tool retries every 5xx ten times, so bad input is never a
// 5xx. Every endpoint is counted under its path in
// rlsearch_http_requests_total{endpoint,code} and
// rlsearch_http_request_duration_seconds{endpoint}; failures also in
// rlsearch_http_errors_total{kind}. Responses of Config.Extra endpoints are
// encoded whole before the status is written (a NaN the encoder refuses is
// a 500, never an empty 200); /retrieve streams (below).
//
// /retrieve answers {"result": [[{"document": {"id", "contents"}, "score"}, ...], ...]}
// with one inner list per query when return_scores is true, and
// {"result": [[{"id", "contents"}, ...], ...]} (bare documents) when it is false.
// "topk" defaults to 3 (Search-R1's retrieval_topk), also when it is 0 (Search-R1:
// `if not request.topk`), "return_scores" to false,
// and "retriever" (our extension) to Config.Default. A JSON null counts as an
// absent field.
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
// Blank (empty or whitespace-only) queries get an empty list without
// reaching the retriever, and hits with padding rows (< 0) or repeated rows
// are dropped, so "topk" beyond the corpus returns each match once.
// Scores are float32 widened to float64, written as encoding/json writes a
// float64; no NaN or infinity ever leaves the server.
//
// A retriever may report on the request it serves through its context:
// MarkPartial (the answer lacks part of the data; the response gets the
// X-Rlsearch-Partial header, and /retrieve the field "partial": [...]
// beside "result") and MarkUnavailable (the request must fail with 503
// and Retry-After even if the endpoint would answer 200, as the program
// runtime does with retrieval errors). A DocRetriever returns the
// documents of its hits with them, and /retrieve writes those instead of
// Config.Docs' (a router over shards; package server/router).
//
// NewBatcher wraps an expensive retriever (the E5 encoder on a GPU) in a
// queue that merges concurrent calls into one underlying batch, every
// query searched at its own caller's k (rlsearch.RetrieveWidths), so that
// batch-mates never change an answer (the determinism contract: an answer
// is a function of index build, request and settings only).
//
// Config.Fingerprint, when set, goes out on every response in the
// X-Rlsearch-Fingerprint header (FingerprintHeader) and in /healthz
// "fingerprint": index build id, encoder configuration hash, dense backend
// and its parameters, reranker (server/app.Fingerprint), for a trainer to
// log with each observation.
//
// Floors: server is the bottom of the serving tree. It imports only the
// root package and internal/; server/router (the router mode over shard
// servers) and server/app (the assembly of `rlsearch serve`) sit above
// it, and no domain package imports any of them (the root package's
// documentation, Floors; checked by TestImportFloors).
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
//		Extra: map[string]server.Endpoint{
//			"/v1/programs/execute": server.JSON(rt.Serve, server.EndpointOptions{MaxBodyBytes: rt.MaxBodyBytes()}),
//		},
//	})
//	if err != nil {
//		return err
//	}
//	return srv.ListenAndServe(ctx, ":8000", func(a net.Addr) { log.Printf("listening on %s", a) })
package server
