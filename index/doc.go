// Package index builds and opens an index directory: the compressed
// passages, the BM25 inverted index and, when an encoder is given, the
// dense E5 shard, plus meta.json describing them.
//
//	DIR/meta.json    build metadata (counts, parameters, model), see Meta
//	DIR/docs.zst     passages by row (package docstore)
//	DIR/bm25.idx     BM25 inverted index (package bm25)
//	DIR/dense.shard  passage embeddings, row i = passage i (package ann), optional
//	DIR/urls.zst     each passage's "url" by row (a docstore), only for a corpus with urls
//
// Build streams the corpus once, writes into a temporary directory beside
// DIR and renames it into place, so a failed or interrupted build never
// leaves a half-written index under DIR. The build holds an flock on
// DIR.tmp-N.lock; the next build of DIR removes the DIR.tmp-N* leftovers
// of builds that died (even by SIGKILL) and never a live build's.
//
// Build pipeline: one goroutine reads and JSON-decodes the corpus; the
// calling goroutine adds passages in row order to the docstore (whose
// blocks are zstd-compressed on worker goroutines), to the BM25 builder
// and to the dense writer (encoder on its own goroutine). Memory outside
// the BM25 builder and the corpus's duplicate-id set is bounded. Progress
// goes to BuildConfig.Progress: a bar on a terminal, else a plain line
// every 10 s (passages, % of corpus bytes read, passages/s, ETA) and a
// line per phase (indexing, merging BM25 runs and writing, writing).
//
// Check (rlsearch check) reads every file once and checks every
// checksum, block and count. Open loads an index and, when it
// has a vector file and an encoder is given, checks that they belong
// together (same dimension; sampled stored passages retrieve themselves at
// rank 1) before anything is served.
//
// BuildShards splits a corpus into N shard directories, DIR/shard-I-of-N,
// each a complete index of its contiguous rows whose BM25 file scores with
// the corpus-wide statistics (package bm25, Shards), plus DIR/manifest.json
// (Manifest: the corpus checksum, the split, the statistics and a build id
// derived from them); BuildConfig.Only builds some shards only, e.g. one per
// machine, with the same files and manifest as a build of all of them.
// A shard directory's meta.json names its shard (Meta.Shard) and Health
// reports it, which is how a router (package server/router) recognises
// the shards of one build.
//
// An opened Index is read-only and safe for concurrent use.
package index
