package index

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// BenchmarkSearchR1Indexes reproduces Search-R1's two published index types
// at 100,000 × 768 with python3-faiss: e5_Flat.index (IndexFlatIP) and
// e5_HNSW64.index (IndexHNSWFlat(768, 64), inner product), over vectors
// seeded by the real bge-base vectors of ../shared/data/vectors (each row
// one of the 5,544 real vectors plus N(0, 0.02²) noise per value,
// normalised; queries: the 500 real held-out query vectors). It imports
// both (vectors/s, graph nodes/s), then checks and reports:
//
//   - exact: our flat search over the imported fp32 shard against faiss's
//     IndexFlatIP search: queries whose top 10 rows equal faiss's, largest
//     score difference;
//   - HNSW: recall@10 against exact of our search on the imported graph,
//     of faiss 1.7.3's own search on it, and of the port of faiss ≥ 1.7.4's
//     search (testutil.FaissHNSWSearchPy), at efSearch 16 (faiss's default,
//     what e5_HNSW64.index serves unless changed), 64 and 128, with our
//     queries/s (one goroutine, batch 1).
//
// Opt-in (RLSEARCH_BENCH_SEARCHR1=1; `make bench-searchr1`): building the
// faiss HNSW takes minutes. The faiss files are kept in
// RLSEARCH_BENCH_DIR (default out/bench-searchr1) and reused.
func BenchmarkSearchR1Indexes(b *testing.B) {
	if os.Getenv("RLSEARCH_BENCH_SEARCHR1") != "1" {
		b.Skip("RLSEARCH_BENCH_SEARCHR1=1 not set (make bench-searchr1)")
	}
	testutil.RequireFaiss(b)
	const n, d, k = 100_000, 768, 10
	efs := []int{16, 64, 128}
	dir := os.Getenv("RLSEARCH_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(testutil.RepoRoot(b), "out", "bench-searchr1")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	vecs := filepath.Join(testutil.DataDir(b), "vectors", "beir_bge_base_queries")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		start := time.Now()
		testutil.RunPython(b, dir, 2, fmt.Sprintf(`import faiss, numpy as np, time
n, d, k = %d, %d, %d
efs = %s
def fvecs(p):
    a = np.fromfile(p, dtype='<i4'); dd = a[0]; return a.reshape(-1, dd + 1)[:, 1:].view('<f4').copy()
base = fvecs('%s/base.fvecs'); q = fvecs('%s/query.fvecs')
rng = np.random.default_rng(2026)
x = base[rng.integers(0, len(base), n)] + rng.normal(0, 0.02, (n, d)).astype('float32'); faiss.normalize_L2(x); faiss.normalize_L2(q)
q.astype('<f4').tofile('q.f32')
flat = faiss.IndexFlatIP(d); flat.add(x); faiss.write_index(flat, 'e5_Flat.index')
D, E = flat.search(q, k); D.astype('<f4').tofile('exact.D'); E.astype('<i8').tofile('exact.I')
t = time.time(); h = faiss.IndexHNSWFlat(d, 64, faiss.METRIC_INNER_PRODUCT); h.add(x); print('faiss HNSW64 build %%.1f s' %% (time.time() - t))
faiss.write_index(h, 'e5_HNSW64.index')
%s
for ef in efs:
    h.hnsw.efSearch = ef
    t = time.time(); _, I = h.search(q, k); dt = time.time() - t
    I.astype('<i8').tofile('faiss173.%%d' %% ef); open('faiss173.%%d.qps' %% ef, 'w').write('%%f' %% (len(q) / dt))
    hnsw_search(h.hnsw, x, q, k, ef, True).astype('<i8').tofile('fixed.%%d' %% ef)
open('done', 'w').write('ok')
`, n, d, k, pyList(efs), vecs, vecs, testutil.FaissHNSWSearchPy))
		b.Logf("faiss files written in %s (%.0f s)", dir, time.Since(start).Seconds())
	}
	q := testutil.ReadFloat32s(b, filepath.Join(dir, "q.f32"))
	nq := len(q) / d
	exactD := testutil.ReadFloat32s(b, filepath.Join(dir, "exact.D"))
	exactI := testutil.ReadInt64s(b, filepath.Join(dir, "exact.I"))
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		// Flat: import, exact search against faiss's.
		shard := filepath.Join(b.TempDir(), DenseFile)
		flatFile := filepath.Join(dir, "e5_Flat.index")
		secs := importBench(b, flatFile, shard, n)
		b.ReportMetric(float64(n)/secs, "flat_import_vectors/s")
		f, err := ann.ReadVectorFile(shard)
		if err != nil {
			b.Fatal(err)
		}
		hits, err := f.Search(ctx, q, k)
		if err != nil {
			b.Fatal(err)
		}
		equal, maxDiff := 0, 0.0
		truth := make([][]int32, nq)
		for qi := range hits {
			same := len(hits[qi]) == k
			for r, h := range hits[qi] {
				truth[qi] = append(truth[qi], h.Row)
				same = same && int64(h.Row) == exactI[qi*k+r]
				maxDiff = math.Max(maxDiff, math.Abs(float64(h.Score-exactD[qi*k+r])))
			}
			if same {
				equal++
			}
		}
		b.ReportMetric(float64(equal)/float64(nq), "flat_queries_equal_faiss")
		b.ReportMetric(maxDiff, "flat_max_score_diff")
		b.Logf("IndexFlatIP %d × %d: imported at %.0f vectors/s; %d of %d queries' top %d equal faiss's rows in order, largest score difference %.2g", n, d, float64(n)/secs, equal, nq, k, maxDiff)

		// HNSW64: import the vectors and the graph (importVectors writes
		// both), then the graph alone again to time it; search at each ef.
		hnswFile := filepath.Join(dir, "e5_HNSW64.index")
		hshard := filepath.Join(b.TempDir(), DenseFile)
		secs = importBench(b, hnswFile, hshard, n)
		r, err := vecfile.Open(hnswFile)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := importGraph(ctx, BuildConfig{Vectors: hnswFile}, r, r.Graph(), filepath.Join(b.TempDir(), HNSWFile), nil); err != nil {
			b.Fatal(err)
		}
		gsecs := time.Since(start).Seconds()
		r.Close()
		b.ReportMetric(float64(n)/gsecs, "graph_import_nodes/s")
		hf, err := ann.ReadVectorFile(hshard)
		if err != nil {
			b.Fatal(err)
		}
		g, err := ann.LoadHNSWShared(filepath.Join(filepath.Dir(hshard), HNSWFile), hf)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("IndexHNSWFlat(768, 64) %d × %d: vectors and graph imported in %.1f s; the graph alone at %.0f nodes/s (%.1f s)", n, d, secs, float64(n)/gsecs, gsecs)
		for _, ef := range efs {
			g.SetEfSearch(ef)
			start := time.Now()
			var ours [][]int32
			for qi := 0; qi < nq; qi++ {
				hs, err := g.Search(ctx, q[qi*d:(qi+1)*d], k)
				if err != nil {
					b.Fatal(err)
				}
				var rows []int32
				for _, h := range hs[0] {
					rows = append(rows, h.Row)
				}
				ours = append(ours, rows)
			}
			qps := float64(nq) / time.Since(start).Seconds()
			f173 := testutil.LabelRows(testutil.ReadInt64s(b, filepath.Join(dir, fmt.Sprint("faiss173.", ef))), k)
			fixed := testutil.LabelRows(testutil.ReadInt64s(b, filepath.Join(dir, fmt.Sprint("fixed.", ef))), k)
			rOurs, r173, rFixed := testutil.Overlap(ours, truth), testutil.Overlap(f173, truth), testutil.Overlap(fixed, truth)
			fq, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint("faiss173.", ef, ".qps")))
			b.ReportMetric(rOurs, fmt.Sprintf("recall_ours_ef%d", ef))
			b.ReportMetric(rFixed, fmt.Sprintf("recall_faiss_fixed_ef%d", ef))
			b.ReportMetric(r173, fmt.Sprintf("recall_faiss173_ef%d", ef))
			b.ReportMetric(qps, fmt.Sprintf("qps_ours_ef%d", ef))
			b.Logf("efSearch %3d: recall@%d ours %.4f, faiss ≥ 1.7.4 (port) %.4f, faiss 1.7.3 %.4f; same rows as the port %.4f; ours %.0f q/s (1 goroutine, batch 1), faiss 1.7.3 %s q/s (2 threads, batch %d)", ef, k, rOurs, rFixed, r173, testutil.Overlap(ours, fixed), qps, fq, nq)
		}
	}
}

func pyList(xs []int) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s + "]"
}

// importBench imports file into an fp32 shard at path and returns the
// seconds it took.
func importBench(b *testing.B, file, path string, n int) float64 {
	b.Helper()
	r, err := vecfile.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	if _, err := importVectors(context.Background(), BuildConfig{Vectors: file, VectorsEncoder: "bench", DType: ann.FP32}, r, n, 0, []vectorDest{{lo: 0, hi: n, path: path}}, nil); err != nil {
		b.Fatal(err)
	}
	return time.Since(start).Seconds()
}
