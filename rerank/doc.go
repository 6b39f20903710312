// Package rerank scores (query, document) pairs with cross-attention models
// through ONNX Runtime: Qwen3-Reranker (yes/no scoring of a chat prompt) and
// BERT-family cross-encoders. It also holds the exact Qwen3 byte-level BPE
// tokenizer (BPE), which the program runtime uses to count observation
// tokens.
//
// Build: cgo (ONNX Runtime through github.com/yalue/onnxruntime_go, loaded
// at run time from the library scripts/setup.sh installs). CPU only: the
// ONNX sessions use the CPU execution provider.
//
// Example:
//
//	tok, err := rerank.LoadBPE(".cache/tokenizers/qwen3.json")
//	n := tok.CountTokens(observation)
package rerank
