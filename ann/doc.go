// Package ann holds the vector indexes: the on-disk shard of passage
// embeddings and exact flat inner-product search on CPU (the oracle every
// other index is compared with).
//
// A shard stores one embedding per index row (row i is the passage at row i
// of the docstore) as fp16 (default; IEEE 754 binary16, widened to float32
// per tile while scoring) or fp32. The byte layout is in FORMAT.md beside
// this file.
//
// Flat.Search scores a batch of queries against the whole shard, spreading
// row tiles over all cores (GOMAXPROCS) and keeping a bounded top-k heap
// per query. Results are exact: sorted by descending inner product, ties by
// ascending row, identical to a naive loop over the widened vectors.
//
// No cgo; CPU only in this package for now.
package ann
