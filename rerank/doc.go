// Package rerank scores (query, document) pairs with cross-attention models
// through ONNX Runtime. Its tokenizers are package tokenizer's: Qwen3's
// byte-level BPE (tokenizer.LoadBPE) and WordPiece for cross-encoders.
//
//   - Reranker (Open): Qwen3-Reranker (the model card's yes/no prompt, score
//     = P(yes) from the last position's logits) and BERT-family
//     cross-encoders ([CLS] q [SEP] p [SEP], score = a logit or class
//     probability); it implements rlsearch.Reranker. Concurrent calls share
//     batches through one queue served by a pool of ORT sessions; a batch
//     is sorted by length and cut into runs of at most
//     Config.MaxBatchTokens padded tokens, so a long document runs alone.
//   - Service: Search-R1's POST /rerank contract over any
//     rlsearch.Reranker as a plain call, Serve(ctx, RerankRequest)
//     (rerank_topk absent, null or 0 keeps 3, Search-R1's default);
//     server owns the HTTP side and this package does not import
//     net/http. Check: the startup sanity check for real weights.
//
// Non-finite scores. No NaN or ±Inf score ever leaves this package: the
// choice is an error, not "rank last with a flag", because a NaN means the
// model (a broken export or weights) is at fault and any ranking built on
// it would be silently wrong; a trainer must see it. Reranker.Rerank fails
// with a *NonFiniteError (errors.Is ErrNonFinite) naming the query and the
// document (position and id); RerankLists does the same for any
// rlsearch.Reranker and names the request's positions, queries[i] and
// documents[i][j]; POST /rerank answers 500 with that message in the JSON
// error (500 because the served model is at fault, not the client; it
// counts under rlsearch_http_errors_total{kind="internal"} in /metrics),
// whatever return_scores says; Service.Serve returns the body encoded
// whole (EncodeResult) and the HTTP layer writes the status only then, so an encoding failure can
// never become an empty 200. rerank() in programs and `rlsearch rerank` go
// through Reranker.Rerank and report the same error.
//
// Build: ONNX Runtime is loaded at run time for the cpu and cuda
// providers (internal/ortenv initialises it once per process, shared with
// package embed): through github.com/yalue/onnxruntime_go with cgo, through
// purego in a CGO_ENABLED=0 build. Provider "gpu" runs package
// transformer's fp16 Qwen3 forward pass instead and needs no ONNX Runtime.
// Providers gpu and cuda run the model canary before serving
// (Config.Provider).
//
// Example:
//
//	r, err := rerank.Open(rerank.Config{Dir: "models/qwen3-reranker-0.6b"})
//	defer r.Close()
//	scores, err := r.Rerank(ctx, "who wrote Hamlet?", docs) // one score per doc, in order
//
// Test models with random weights and the same inputs and outputs come
// from scripts/gen_qwen3.py and scripts/gen_bert.py --head classifier; the
// README shows how to export the real ones.
package rerank
