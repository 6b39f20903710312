package index

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestImportFaissIndexTypes builds indexes of 3,000 wiki_multihop passages
// from the faiss index types Search-R1 and FlashRAG users hold
// (IndexHNSWFlat as Search-R1's e5_HNSW64.index, IndexIVFFlat, IndexIDMap
// with shuffled ids), written by python3-faiss, and checks that the shard
// holds faiss's vectors bit for bit in corpus order (fp32), that the HNSW
// graph is imported (meta.json, dense.hnsw) and served by the hnsw backend
// with the hits of faiss's search on that graph (the port of faiss ≥ 1.7.4
// in testutil.FaissHNSWSearchPy), and that a lossy index is refused before
// anything is built.
func TestImportFaissIndexTypes(t *testing.T) {
	testutil.RequireFaiss(t)
	corpusPath := subsetCorpus(t, 3000)
	n := countLines(t, corpusPath)
	dir := t.TempDir()
	const d, nq, k, ef = 64, 40, 10, 24
	testutil.RunPython(t, dir, 1, fmt.Sprintf(`import faiss, numpy as np
n, d, nq, k, ef = %d, %d, %d, %d, %d
rng = np.random.default_rng(23)
x = rng.standard_normal((n, d)).astype('float32'); faiss.normalize_L2(x)
q = rng.standard_normal((nq, d)).astype('float32'); faiss.normalize_L2(q)
perm = rng.permutation(n).astype('int64')
x.astype('<f4').tofile('x.f32'); q.astype('<f4').tofile('q.f32')
h = faiss.IndexHNSWFlat(d, 16, faiss.METRIC_INNER_PRODUCT); h.add(x); faiss.write_index(h, 'e5_HNSW16.index')
iv = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, 16, faiss.METRIC_INNER_PRODUCT); iv.train(x); iv.add(x); faiss.write_index(iv, 'ivf.index')
m = faiss.IndexIDMap(faiss.IndexFlatIP(d)); m.add_with_ids(x[perm], perm); faiss.write_index(m, 'idmap.index')
pq = faiss.IndexPQ(d, 8, 4, faiss.METRIC_INNER_PRODUCT); pq.train(x); pq.add(x); faiss.write_index(pq, 'pq.index')
%s
hnsw_search(h.hnsw, x, q, k, ef, True).astype('<i8').tofile('hnsw.I')
`, n, d, nq, k, ef, testutil.FaissHNSWSearchPy))
	x := testutil.ReadFloat32s(t, filepath.Join(dir, "x.f32"))
	q := testutil.ReadFloat32s(t, filepath.Join(dir, "q.f32"))
	want := testutil.ReadInt64s(t, filepath.Join(dir, "hnsw.I"))
	ctx := context.Background()
	for _, c := range []struct {
		file  string
		graph bool
	}{{"e5_HNSW16.index", true}, {"ivf.index", false}, {"idmap.index", false}} {
		t.Run(c.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ix")
			var progress strings.Builder
			meta, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: out, Vectors: filepath.Join(dir, c.file), VectorsEncoder: "intfloat/e5-base-v2", DType: ann.FP32, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(out, HNSWFile))
			if (meta.Dense.ImportedGraph != "") != c.graph || (statErr == nil) != c.graph {
				t.Fatalf("imported graph %q, %s present: %v; want a graph: %v", meta.Dense.ImportedGraph, HNSWFile, statErr == nil, c.graph)
			}
			backend := ann.BackendFlat
			if c.graph {
				backend = ann.BackendHNSW
				if !strings.Contains(meta.Dense.ImportedGraph, "IndexHNSW(M=16, storage IndexFlatIP), efSearch 16") || !strings.Contains(progress.String(), "importing the faiss HNSW graph") {
					t.Errorf("meta %q, progress %q", meta.Dense.ImportedGraph, progress.String())
				}
			}
			ix, err := Open(ctx, out, OpenConfig{DenseBackend: backend, HNSWEfSearch: ef})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			for row := 0; row < n; row++ {
				got := ix.Dense.Vector(row)
				for j, v := range got {
					if math.Float32bits(v) != math.Float32bits(x[row*d+j]) {
						t.Fatalf("row %d value %d = %v, faiss %v", row, j, v, x[row*d+j])
					}
				}
			}
			if !c.graph {
				return
			}
			if ix.DenseSearch.Backend != ann.BackendHNSW {
				t.Fatalf("backend %s (%s), want hnsw", ix.DenseSearch.Backend, ix.DenseSearch.Reason)
			}
			hits, err := ix.DenseSearch.Search(ctx, q, k)
			if err != nil {
				t.Fatal(err)
			}
			same := 0
			for i := range hits {
				for _, h := range hits[i] {
					if slices.Contains(want[i*k:(i+1)*k], int64(h.Row)) {
						same++
					}
				}
			}
			if same < nq*k*99/100 {
				t.Errorf("%d of %d hits are those of faiss's search on its graph, want ≥ 99%%", same, nq*k)
			}
		})
	}
	t.Run("lossy", func(t *testing.T) {
		parent := t.TempDir()
		_, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: filepath.Join(parent, "ix"), Vectors: filepath.Join(dir, "pq.index"), VectorsEncoder: "e5"})
		if err == nil || !strings.Contains(err.Error(), "IndexPQ") || !strings.Contains(err.Error(), "e5_Flat.index") {
			t.Fatalf("err = %v, want the lossy-codes refusal naming IndexPQ and what to pass instead", err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("left behind: %v", ents)
		}
	})
	_ = vecfile.ErrUnsupported
}
