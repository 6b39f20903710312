// Package ann holds the vector indexes and their on-disk formats: exact
// flat inner-product search on CPU (Flat, the oracle every other index is
// compared with), HNSW graphs (HNSW), the GPU flat index (GPUFlat, gpu*.go)
// and Open, the one code path that chooses among them.
//
// # Vector files
//
// A vector file (dense.shard in an index directory; the name and the
// RLSVEC02 format are kept so that every index built before stays
// readable) stores one embedding per index row as fp16 (default; IEEE 754
// binary16), fp32 or int8 (per-dimension scale/offset, FitInt8), in blocks
// with a CRC-32C each, optionally zstd-compressed with byte-shuffle, with an
// optional int64 id table (FORMAT.md, byte by byte). CreateVectorFile
// streams rows into a temporary file renamed by Close; ReadVectorFile
// loads a vector file whole; VectorFileReader streams it block by block.
// Corrupt or truncated files are refused with ErrCorrupt naming the block
// and byte offset.
//
// "Shard" elsewhere in the module means one partition of a corpus (rlsearch
// index --shards, serve --shards, packages index, bm25 and server/router);
// package ann calls its file a vector file so that the word keeps one
// meaning (issue 37; the identifiers were ShardWriter, CreateShard,
// WriteShard, ShardReader, OpenShardReader, ReadShard and
// MemoryNeed.Shard).
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
// A compressed graph ((*HNSW).Compress, Config.HNSWCompressed, rlsearch
// --hnsw-compressed) traverses on int8 codes and re-ranks the final
// efSearch candidates on an fp16 rows file (WriteFP16Rows, FORMAT.md)
// memory-mapped read-only, so that only the codes and the graph are on the
// heap (D + ~160 bytes per vector at M = 16). The rows file is written
// atomically beside the shard on first use and reused while its header's
// shape and rows CRC-32C match the shard's vectors; a stale or damaged one
// is refused (ErrStaleRows, ErrCorrupt), never rewritten in place:
//
//	o, err := ann.Open(ctx, ann.Config{Path: "dense.shard", Backend: "hnsw",
//		HNSWPath: "dense.hnsw", HNSWCompressed: true}) // rows in dense.shard.f16
//
// # Choosing
//
//	o, err := ann.Open(ctx, ann.Config{Path: "dense.shard"}) // Backend "auto"
//	hits, err := o.Search(ctx, queries, 10)                   // o.Backend: "gpu", "flat" or "hnsw"
//
// # GPU search canary
//
// Before Open serves search from a GPUFlat ("auto" or "gpu"), it runs
// GPUFlat.Canary (SearchCanary; gpu_canary.go): 128 fixed queries (32
// shard rows spread over the reference rows, 32 unit vectors from a PCG
// seeded 0x5ea2c4, and the negations of both) in the batches that reach
// every pipeline (128, 64, 16 and 1 queries at k 10 and 100; 2 queries at
// k 2,049 > kernels.KMax), against Flat.Search over the reference rows:
// the whole shard up to CanaryRefRows (65,536) rows, else 16 blocks of
// 4,096 rows spread from the first row to the last, plus every row the
// GPU returned (rescored). Compared: the hit count; the GPU's own order
// (descending score, equal scores by ascending row, no row twice); each
// score within its row's error bound e(r) + 2^-20 of the exact float64
// ⟨q, x⟩, where e(r) sums the fp16 roundings the GPU makes (of q and x, or
// of q∘scale over int8 codes) and 2·d·2^-24·Σ|q̂x̂| for the fp32
// accumulation (≈ 1e-4 for unit vectors at d 768, at most ≈ 1.1e-3);
// the rows rank by rank against the exact top-k, a different row allowed
// only where the two exact scores are within twice the list's largest
// bound (a tie within the error). The CPU side is fixed (128 × 65,536 ×
// d multiply-adds) whatever the shard size; a dropped row outside the
// reference rows is not seen. On a mismatch "auto" serves on the CPU,
// logs one line "ann: GPU SEARCH CANARY FAILED, NOT SERVING SEARCH FROM
// THE GPU: query I (…), batch of B, k K: rank R: expected row … got row
// …" and keeps the report in Opened.Canary (/healthz dense.canary);
// "gpu" fails with an error wrapping ErrGPUCanary naming the same.
// Config.SkipGPUCanary (rlsearch --gpu-canary=false) skips it.
//
// No cgo and no build tags: the GPU index binds the driver at run time
// through package cuda and falls back (Open) when there is none; its
// pipelines are described in README.md and gpu_scan.go.
package ann
