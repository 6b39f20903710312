// Package index builds and opens an index directory: the compressed
// passages, the BM25 inverted index and, when an encoder is given, the
// dense E5 shard, plus meta.json describing them.
//
//	DIR/meta.json    build metadata (counts, parameters, model), see Meta
//	DIR/docs.zst     passages by row (package docstore)
//	DIR/bm25.idx     BM25 inverted index (package bm25)
//	DIR/dense.shard  passage embeddings, row i = passage i (package ann), optional
//
// Build streams the corpus once, writes into a temporary directory beside
// DIR and renames it into place, so a failed or interrupted build never
// leaves a half-written index under DIR. Open loads an index and, when it
// has a dense shard and an encoder is given, checks that they belong
// together (same dimension; sampled stored passages retrieve themselves at
// rank 1) before anything is served.
//
// An opened Index is read-only and safe for concurrent use.
package index
