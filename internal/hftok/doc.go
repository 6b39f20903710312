// Package hftok holds the one Go mirror of a Hugging Face tokenizer.json
// (tokenizers 0.x serialisation) shared by the WordPiece tokenizer of
// package embed and the byte-level BPE tokenizer of package rerank. Each
// tokenizer reads the sections it supports and rejects the rest; padding
// and truncation are never applied (the callers decide lengths).
package hftok
