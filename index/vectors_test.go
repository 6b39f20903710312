package index

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestImportFaissMatchesFaissSearch builds an index of the whole
// wiki_multihop corpus (18,175 passages) from a faiss IndexFlatIP file of
// random unit vectors (768-d) and checks that dense search returns faiss's
// own top 10 for 32 queries (fp32 storage: exact up to float rounding
// ties; fp16 and int8: recall@10 against faiss).
func TestImportFaissMatchesFaissSearch(t *testing.T) {
	testutil.RequireFaiss(t)
	corpusPath := subsetCorpus(t, 1<<30)
	n := countLines(t, corpusPath)
	dir := t.TempDir()
	const d, nq, k = 768, 32, 10
	testutil.RunPython(t, dir, 2, fmt.Sprintf(`import faiss, numpy as np
rng = np.random.default_rng(11)
x = rng.standard_normal((%[1]d, %[2]d)).astype('float32'); faiss.normalize_L2(x)
ix = faiss.IndexFlatIP(%[2]d); ix.add(x); faiss.write_index(ix, 'e5_Flat.index')
l2 = faiss.IndexFlatL2(%[2]d); l2.add(x); faiss.write_index(l2, 'l2.index')
# queries near stored rows, so that top-k are well separated
q = x[rng.integers(0, %[1]d, %[3]d)] + 0.05 * rng.standard_normal((%[3]d, %[2]d)).astype('float32'); faiss.normalize_L2(q)
D, I = ix.search(q, %[4]d)
q.astype('<f4').tofile('q.f32'); D.astype('<f4').tofile('D.f32'); I.astype('<i8').tofile('I.i64')
`, n, d, nq, k))
	q := testutil.ReadFloat32s(t, filepath.Join(dir, "q.f32"))
	wantD := testutil.ReadFloat32s(t, filepath.Join(dir, "D.f32"))
	wantI := testutil.ReadInt64s(t, filepath.Join(dir, "I.i64"))
	ctx := context.Background()
	for _, c := range []struct {
		file      string
		dtype     ann.DType
		minRecall float64
	}{
		{"e5_Flat.index", ann.FP32, 1},
		{"l2.index", ann.FP32, 1},
		{"e5_Flat.index", ann.FP16, 0.97},
		{"e5_Flat.index", ann.INT8, 0.9},
	} {
		t.Run(fmt.Sprintf("%s/%s", c.file, c.dtype), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ix")
			meta, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: out, Vectors: filepath.Join(dir, c.file), VectorsEncoder: "intfloat/e5-base-v2", DType: c.dtype})
			if err != nil {
				t.Fatal(err)
			}
			if meta.Dense == nil || meta.Dense.Model != "intfloat/e5-base-v2" || meta.Dense.Dim != d || meta.Dense.DType != c.dtype.String() || meta.Dense.ImportedFrom == "" {
				t.Fatalf("meta.Dense = %+v", meta.Dense)
			}
			ix, err := Open(ctx, out, OpenConfig{DenseBackend: ann.BackendFlat})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if got := ix.Dense.Header().EncoderID; got != "intfloat/e5-base-v2" {
				t.Fatalf("shard encoder id %q", got)
			}
			hits, err := ix.DenseSearch.Search(ctx, q, k)
			if err != nil {
				t.Fatal(err)
			}
			found, total := 0, 0
			for i := 0; i < nq; i++ {
				want := map[int64]bool{}
				for _, id := range wantI[i*k : (i+1)*k] {
					want[id] = true
				}
				for r, h := range hits[i] {
					if want[int64(h.Row)] {
						found++
					} else if c.minRecall == 1 && math.Abs(float64(h.Score-wantD[i*k+k-1])) > 1e-5 {
						t.Errorf("query %d rank %d: row %d (score %.6f) is not in faiss's top %d (k-th score %.6f)", i, r, h.Row, h.Score, k, wantD[i*k+k-1])
					}
					if c.dtype == ann.FP32 && math.Abs(float64(h.Score-wantD[i*k+r])) > 1e-5 {
						t.Errorf("query %d rank %d: score %.7f, faiss %.7f", i, r, h.Score, wantD[i*k+r])
					}
				}
				total += k
			}
			if rec := float64(found) / float64(total); rec < c.minRecall {
				t.Errorf("recall@%d against faiss = %.3f, want ≥ %.2f", k, rec, c.minRecall)
			}
		})
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestImportErrors checks the refusals: count and dimension mismatches
// name both numbers, a missing encoder name names the flag, un-normalised
// vectors are refused (allowed for inner product with the flag, never for
// L2), and nothing is left behind.
func TestImportErrors(t *testing.T) {
	testutil.RequireFaiss(t)
	corpusPath := writeCorpus(t, smallCorpus) // 4 non-empty passages, 1 empty
	dir := t.TempDir()
	testutil.RunPython(t, dir, 2, `import faiss, numpy as np
rng = np.random.default_rng(3)
def unit(n, d):
    x = rng.standard_normal((n, d)).astype('float32'); faiss.normalize_L2(x); return x
for name, cls, x in [('ok', faiss.IndexFlatIP, unit(4, 8)), ('five', faiss.IndexFlatIP, unit(5, 8)),
                     ('three', faiss.IndexFlatIP, unit(3, 8)), ('raw', faiss.IndexFlatIP, 3 * unit(4, 8)),
                     ('rawl2', faiss.IndexFlatL2, 3 * unit(4, 8))]:
    ix = cls(8); ix.add(x); faiss.write_index(ix, name + '.index')
np.save('ok.npy', unit(4, 8).astype('float16'))
np.save('f64.npy', unit(4, 8).astype('float64'))
nan = unit(4, 8); nan[2, 5] = np.nan; np.save('nan.npy', nan)
`)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cfg  BuildConfig
		want []string // "" = success
	}{
		{"ok", BuildConfig{Vectors: "ok.index", VectorsEncoder: "e5"}, nil},
		{"ok npy int8", BuildConfig{Vectors: "ok.npy", VectorsEncoder: "e5", DType: ann.INT8}, nil},
		{"no encoder name", BuildConfig{Vectors: "ok.index"}, []string{"--vectors-encoder", "--model"}},
		{"skipped rows counted", BuildConfig{Vectors: "five.index", VectorsEncoder: "e5"}, []string{"5 vectors", "4 passages", "1 empty"}},
		{"too few", BuildConfig{Vectors: "three.index", VectorsEncoder: "e5"}, []string{"3 vectors", "4 passages"}},
		{"model dim", BuildConfig{Vectors: "ok.index", Encoder: hashEncoder{dim: 16}}, []string{"8-d", "16 dimensions"}},
		{"unnormalised", BuildConfig{Vectors: "raw.index", VectorsEncoder: "e5"}, []string{"row 0", "norm 3", "--vectors-unnormalized"}},
		{"unnormalised allowed", BuildConfig{Vectors: "raw.index", VectorsEncoder: "e5", VectorsUnnormalized: true}, nil},
		{"unnormalised L2", BuildConfig{Vectors: "rawl2.index", VectorsEncoder: "e5", VectorsUnnormalized: true}, []string{"row 0", "L2"}},
		{"float64", BuildConfig{Vectors: "f64.npy", VectorsEncoder: "e5"}, []string{"float64"}},
		{"NaN even when unnormalised is allowed", BuildConfig{Vectors: "nan.npy", VectorsEncoder: "e5", VectorsUnnormalized: true}, []string{"row 2", "NaN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			cfg := c.cfg
			cfg.Corpus, cfg.Dir, cfg.Vectors = corpusPath, filepath.Join(parent, "ix"), filepath.Join(dir, cfg.Vectors)
			meta, err := Build(ctx, cfg)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				ix, err := Open(ctx, cfg.Dir, OpenConfig{})
				if err != nil {
					t.Fatal(err)
				}
				defer ix.Close()
				if h := ix.Dense.Header(); h.Normalized == cfg.VectorsUnnormalized || h.DType.String() != meta.Dense.DType || ix.Dense.Len() != 4 {
					t.Errorf("shard header %+v (%d rows) for VectorsUnnormalized %v, meta %+v", h, ix.Dense.Len(), cfg.VectorsUnnormalized, meta.Dense)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}
