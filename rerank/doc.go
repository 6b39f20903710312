// Package rerank scores (query, document) pairs with cross-attention models
// through ONNX Runtime, and holds the exact Qwen3 tokenizer.
//
//   - BPE: Qwen3's byte-level BPE (tokenizer.json), token ids identical to
//     Hugging Face tokenizers; it implements rlsearch.TokenCounter for the
//     program runtime's observation budget. LoadBPE shares one parsed
//     tokenizer per file within a process.
//   - Reranker (Open): Qwen3-Reranker (the model card's yes/no prompt, score
//     = P(yes) from the last position's logits) and BERT-family
//     cross-encoders ([CLS] q [SEP] p [SEP], score = a logit or class
//     probability); it implements rlsearch.Reranker. Concurrent calls share
//     batches through one queue served by a pool of ORT sessions; a batch
//     is sorted by length and cut into runs of at most
//     Config.MaxBatchTokens padded tokens, so a long document runs alone.
//   - NewHandler: Search-R1's POST /rerank contract over any
//     rlsearch.Reranker; Check: the startup sanity check for real weights.
//
// Build: cgo (github.com/yalue/onnxruntime_go loads ONNX Runtime at run
// time; internal/ortenv initialises it once per process, shared with
// package embed). CPU only: sessions use ONNX Runtime's CPU execution
// provider; there is no GPU path here.
//
// Example:
//
//	tok, err := rerank.LoadBPE(".cache/tokenizers/qwen3.json")
//	n := tok.CountTokens(observation)
//
//	r, err := rerank.Open(rerank.Config{Dir: "models/qwen3-reranker-0.6b"})
//	defer r.Close()
//	scores, err := r.Rerank(ctx, "who wrote Hamlet?", docs) // one score per doc, in order
//
// Test models with random weights and the same inputs and outputs come
// from scripts/gen_qwen3.py and scripts/gen_bert.py --head classifier; the
// README shows how to export the real ones.
package rerank
