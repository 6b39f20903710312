// Package tokenizer is the one home of the project's tokenizers, each
// reproducing id for id what Hugging Face tokenizers 0.22 (Rust) computes
// for a tokenizer.json it supports:
//
//   - WordPiece (LoadWordPiece): BERT's BertNormalizer, BertPreTokenizer,
//     WordPiece model and "[CLS] $A [SEP]" post-processor, as in
//     bert-base-uncased, all-MiniLM-L6-v2 and the E5 family (package embed's
//     encoders, package rerank's cross-encoders);
//   - byte-level BPE (LoadBPE): the GPT-2 / Qwen2 / Qwen3 family, for the
//     Qwen3 rerankers and the token counters (the program runtime's
//     observation cap, PolicyTokenizer; rlsearch.TokenCounter);
//
// both read through one Go mirror of tokenizer.json (hf.go), each taking
// the sections it supports and refusing the rest with an error naming the
// component (ErrUnsupportedTokenizer, ErrBadTokenizer, ErrTokenizer).
// Padding and truncation are never applied from the file: callers decide
// lengths (Encode's maxLen, EncodeLimit's limit).
//
// No cgo, CPU only. A loaded tokenizer is immutable and safe for
// concurrent use. Example:
//
//	tok, err := tokenizer.LoadWordPiece(".cache/tokenizers/bert-uncased.json")
//	ids := tok.Encode("query: who wrote hamlet", 256) // [CLS] ... [SEP]
//	bpe, err := tokenizer.LoadBPE(".cache/tokenizers/qwen3.json")
//	n := bpe.CountTokens("Who wrote Hamlet?")
package tokenizer
