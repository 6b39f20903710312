package index

import (
	"runtime"

	"github.com/rlsearch/rlsearch"
)

// Health describes the served index for the server's GET /healthz: BM25
// statistics, the vector file (count, dim, dtype, encoder) and the dense
// search backend chosen at Open with its reason and the GPU search
// canary's report (dense.canary: internal/canary.Report), the query encoder, the
// CPUs and the build time, and for a shard which one ("shard": index,
// count, first_row, rows, total_rows, build_id, corpus_sha256). Safe for
// concurrent use.
func (ix *Index) Health() map[string]any {
	h := map[string]any{
		"backend":  ix.SearchBackend(),
		"index":    ix.Dir,
		"bm25":     map[string]any{"num_docs": ix.BM25.NumDocs(), "num_terms": ix.BM25.NumTerms(), "k1": ix.Meta.BM25.K1, "b": ix.Meta.BM25.B},
		"cpus":     runtime.GOMAXPROCS(0),
		"dense":    nil,
		"model":    nil,
		"built_at": ix.Meta.Created,
	}
	if sh := ix.Meta.Shard; sh != nil {
		// What a router checks before it routes to this server (package
		// server/router).
		h["shard"] = map[string]any{"index": sh.Index, "count": sh.Count, "first_row": sh.FirstRow, "rows": ix.Len(),
			"total_rows": sh.TotalRows, "build_id": sh.BuildID, "corpus_sha256": sh.CorpusSHA256}
	}
	if ix.Dense != nil {
		hd := ix.Dense.Header()
		h["dense"] = map[string]any{"num_vectors": hd.Count, "dim": hd.Dim, "dtype": hd.DType.String(), "encoder": hd.EncoderID, "search": "exact flat inner product (CPU)"}
		if ds := ix.DenseSearch; ds != nil {
			h["dense"].(map[string]any)["search"] = ds.Backend
			h["dense"].(map[string]any)["search_reason"] = ds.Reason
			h["dense"].(map[string]any)["canary"] = ds.Canary // the GPU search canary (ann.GPUFlat.Canary)
		}
		if _, ok := ix.Retrievers()[rlsearch.RetrieverE5]; ok {
			h["model"] = hd.EncoderID
		}
	}
	return h
}

// SearchBackend is where dense search runs: "gpu" when ann.Open chose the
// GPU, else "cpu" (BM25 always runs on the CPU; so does an index without a
// vector file).
func (ix *Index) SearchBackend() string {
	if ds := ix.DenseSearch; ds != nil && ds.Backend == "gpu" {
		return "gpu"
	}
	return "cpu"
}
