// Package ann holds the vector indexes and their on-disk formats: exact
// flat inner-product search on CPU (Flat, the oracle every other index is
// compared with), HNSW graphs (HNSW), the GPU flat index (GPUFlat, gpu*.go)
// and Open, the one code path that chooses among them.
//
// # Shards
//
// A shard stores one embedding per index row as fp16 (default; IEEE 754
// binary16), fp32 or int8 (per-dimension scale/offset, FitInt8), in blocks
// with a CRC-32C each, optionally zstd-compressed with byte-shuffle, with an
// optional int64 id table (FORMAT.md, byte by byte). CreateShard streams
// rows into a temporary file renamed by Close; ReadShard loads a shard
// whole; ShardReader streams it block by block. Corrupt or truncated files
// are refused with ErrCorrupt naming the block and byte offset.
//
// # Exact flat search
//
// Flat.Search scores blocks of 4 queries against tiles of shard rows
// (192 KiB of float32, fp16/int8 widened per tile) with an assembly kernel
// chosen at run time (golang.org/x/sys/cpu): AVX-512F (4 queries × 6 rows)
// or AVX2+FMA (4 × 3), else pure Go (build tag purego forces it). Tiles are
// spread over GOMAXPROCS goroutines, each with a bounded top-k heap per
// query. Results are exact: descending inner product, ties by ascending row.
//
// # HNSW
//
// NewHNSW builds a graph (Malkov & Yashunin, arXiv:1603.09320) with all
// cores in a deterministic batch-parallel order; Search is concurrent;
// Int8 traverses on int8 codes and re-ranks with float32; Save/LoadHNSW use
// the shard block format; Add works after loading.
//
// # Choosing
//
//	o, err := ann.Open(ctx, ann.Config{Path: "dense.shard"}) // Backend "auto"
//	hits, err := o.Search(ctx, queries, 10)                   // o.Backend: "gpu", "flat" or "hnsw"
//
// No cgo and no build tags: the GPU index binds the driver at run time
// through package cuda and falls back (Open) when there is none; its
// pipelines are described in README.md and gpu_scan.go.
package ann
