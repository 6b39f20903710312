package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
)

// writeFvecs writes n seeded random unit vectors of dim d as .fvecs.
func writeFvecs(t *testing.T, path string, n, d int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	v := make([]float32, d)
	for range n {
		var s float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			s += float64(v[j]) * float64(v[j])
		}
		binary.Write(&b, binary.LittleEndian, int32(d))
		for j := range v {
			binary.Write(&b, binary.LittleEndian, v[j]/float32(math.Sqrt(s)))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openShards opens every shard directory of a sharded build.
func openShards(t *testing.T, dir string, m *Manifest, cfg OpenConfig) []*Index {
	t.Helper()
	var out []*Index
	for _, s := range m.Shards {
		ix, err := Open(context.Background(), filepath.Join(dir, s.Dir), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		out = append(out, ix)
	}
	return out
}

// mergeRetrieve runs retriever name on every shard and merges the lists
// by descending score, ties by ascending corpus row (the oracle merge),
// returning the documents' ids with the scores.
func mergeRetrieve(t *testing.T, shards []*Index, name string, q string, k int) ([]string, []float32) {
	t.Helper()
	var all []rlsearch.Hit
	for _, ix := range shards {
		hits, err := ix.Retrievers()[name].Retrieve(context.Background(), []string{q}, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits[0] {
			all = append(all, rlsearch.Hit{Row: int32(ix.Meta.Shard.FirstRow) + h.Row, Score: h.Score})
		}
	}
	slices.SortFunc(all, rlsearch.CompareHits)
	all = all[:min(k, len(all))]
	ids, scores := make([]string, len(all)), make([]float32, len(all))
	for i, h := range all {
		s := slices.IndexFunc(shards, func(ix *Index) bool {
			return int(h.Row) >= ix.Meta.Shard.FirstRow && int(h.Row) < ix.Meta.Shard.FirstRow+ix.Len()
		})
		d, err := shards[s].Doc(h.Row - int32(shards[s].Meta.Shard.FirstRow))
		if err != nil {
			t.Fatal(err)
		}
		ids[i], scores[i] = d.ID, h.Score
	}
	return ids, scores
}

func retrieveIDs(t *testing.T, ix *Index, name, q string, k int) ([]string, []float32) {
	t.Helper()
	hits, err := ix.Retrievers()[name].Retrieve(context.Background(), []string{q}, k)
	if err != nil {
		t.Fatal(err)
	}
	ids, scores := make([]string, len(hits[0])), make([]float32, len(hits[0]))
	for i, h := range hits[0] {
		d, err := ix.Doc(h.Row)
		if err != nil {
			t.Fatal(err)
		}
		ids[i], scores[i] = d.ID, h.Score
	}
	return ids, scores
}

// TestBuildShardsEqualsOneIndex builds 2,000 wiki_multihop passages (one
// empty line added) as one index and as 3 shards with a vector file (hash
// encoder), and checks the layout (manifest, meta.json, rows, documents)
// and that merged BM25 and dense results equal the one index's, ids and
// float32 scores. Then each shard built alone (Only) must be the same
// files and the same manifest, and every shard dir verifies.
func TestBuildShardsEqualsOneIndex(t *testing.T) {
	src, err := os.ReadFile(subsetCorpus(t, 2000))
	if err != nil {
		t.Fatal(err)
	}
	src = append([]byte(`{"id": "empty-1", "contents": "   "}`+"\n"), src...)
	corpusPath := writeCorpus(t, string(src))
	ctx := context.Background()
	enc := hashEncoder{dim: 24, seed: 5}
	parent := t.TempDir()
	one := filepath.Join(parent, "one")
	if _, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: one, Encoder: enc}); err != nil {
		t.Fatal(err)
	}
	oneIx, err := Open(ctx, one, OpenConfig{Encoder: enc})
	if err != nil {
		t.Fatal(err)
	}
	defer oneIx.Close()
	sharded := filepath.Join(parent, "sharded")
	m, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: sharded, Encoder: enc, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 2000 || m.Skipped != 1 || len(m.Shards) != 3 || m.Shards[1].FirstRow != 666 || m.Shards[2].Rows != 667 || m.Dense == nil || m.Dense.Model != enc.Name() {
		t.Fatalf("manifest %+v: want 2000 rows (1 skipped) in shards from rows 0, 666, 1333 with the hash encoder", m)
	}
	if m.BM25.DocCount != oneIx.BM25.Shard().DocCount || m.BM25.AvgDocLen != oneIx.Meta.BM25.AvgDocLen {
		t.Errorf("manifest bm25 %+v, one index docCount %d avgdl %v", m.BM25, oneIx.BM25.Shard().DocCount, oneIx.Meta.BM25.AvgDocLen)
	}
	read, err := ReadManifest(sharded)
	if err != nil || read.BuildID != m.BuildID {
		t.Fatalf("ReadManifest: %+v, %v; want build %s", read, err, m.BuildID)
	}
	if n, err := CheckShards(ctx, sharded, CheckConfig{}); n != 3 || err != nil {
		t.Errorf("CheckShards = %d, %v; want 3 shards verified", n, err)
	}
	shards := openShards(t, sharded, m, OpenConfig{Encoder: enc})
	for i, ix := range shards {
		sh := ix.Meta.Shard
		if sh == nil || sh.Index != i || sh.Count != 3 || sh.BuildID != m.BuildID || sh.FirstRow != m.Shards[i].FirstRow || ix.Len() != m.Shards[i].Rows {
			t.Fatalf("shard %d meta %+v with %d rows; want shard %d of 3 of build %s", i, sh, ix.Len(), i, m.BuildID)
		}
		if h := ix.Health()["shard"].(map[string]any); h["build_id"] != m.BuildID || h["first_row"] != sh.FirstRow {
			t.Errorf("shard %d health %v", i, h)
		}
		for _, r := range []int32{0, int32(ix.Len() - 1)} {
			got, _ := ix.Doc(r)
			want, _ := oneIx.Doc(int32(sh.FirstRow) + r)
			if got != want {
				t.Errorf("shard %d row %d holds %q, the one index's row %d %q", i, r, got.ID, int(r)+sh.FirstRow, want.ID)
			}
		}
		if err := Check(ctx, ix.Dir, CheckConfig{}); err != nil {
			t.Errorf("shard %d: %v", i, err)
		}
	}
	queries := []string{"capital of france", "who directed the film", "river in europe", "the", "zzzz absent", "album released in 1999 by the band"}
	for _, name := range []string{"bm25", "e5"} {
		for _, q := range queries {
			for _, k := range []int{1, 3, 10, 100} {
				gotIDs, gotScores := mergeRetrieve(t, shards, name, q, k)
				wantIDs, wantScores := retrieveIDs(t, oneIx, name, q, k)
				if !slices.Equal(gotIDs, wantIDs) || !slices.Equal(gotScores, wantScores) {
					t.Fatalf("%s %q k=%d: shards give %v %v, one index %v %v", name, q, k, gotIDs, gotScores, wantIDs, wantScores)
				}
			}
		}
	}

	// Each shard alone, into another directory: the same bytes.
	for i := range 3 {
		alone := filepath.Join(parent, "alone")
		m2, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: alone, Encoder: enc, Shards: 3, Only: []int{i}, BM25: bm25Budget(1)})
		if err != nil {
			t.Fatal(err)
		}
		if m2.BuildID != m.BuildID {
			t.Fatalf("shard %d alone: build %s, all shards %s", i, m2.BuildID, m.BuildID)
		}
		for _, f := range []string{BM25File, DocsFile, DenseFile} {
			a, _ := os.ReadFile(filepath.Join(sharded, ShardDirName(i, 3), f))
			b, err := os.ReadFile(filepath.Join(alone, ShardDirName(i, 3), f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("shard %d alone: %s differs from the all-shards build (%v)", i, f, err)
			}
		}
		if n, err := CheckShards(ctx, alone, CheckConfig{}); n != 1 || err != nil {
			t.Errorf("CheckShards of shard %d alone = %d, %v; want 1 shard verified", i, n, err)
		}
		ents, _ := os.ReadDir(alone)
		if len(ents) != 2 {
			t.Errorf("shard %d alone: %s holds %d entries, want its shard and %s", i, alone, len(ents), ManifestFile)
		}
		// A second shard of the same build joins the same directory.
		if i == 0 {
			if _, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: alone, Encoder: enc, Shards: 3, Only: []int{2}}); err != nil {
				t.Errorf("second shard of the same build into the same directory: %v", err)
			}
		}
		os.RemoveAll(alone)
	}
}

func bm25Budget(bytes int64) bm25.Config { return bm25.Config{MemoryBudget: bytes} }

// TestBuildShardsVectorsInt8: imported vectors split over shards, int8
// quantised with the scales of the whole file, search exactly as the one
// index does.
func TestBuildShardsVectorsInt8(t *testing.T) {
	corpusPath := subsetCorpus(t, 600)
	parent := t.TempDir()
	vecs := filepath.Join(parent, "v.fvecs")
	writeFvecs(t, vecs, 600, 32, 9)
	ctx := context.Background()
	cfg := BuildConfig{Corpus: corpusPath, Vectors: vecs, VectorsEncoder: "test-e5", DType: ann.INT8}
	cfg.Dir = filepath.Join(parent, "one")
	if _, err := Build(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	oneIx, err := Open(ctx, cfg.Dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer oneIx.Close()
	cfg.Dir, cfg.Shards = filepath.Join(parent, "sharded"), 4
	m, err := BuildShards(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dense == nil || m.Dense.Imported == "" || m.Dense.DType != "int8" {
		t.Fatalf("manifest dense %+v", m.Dense)
	}
	shards := openShards(t, cfg.Dir, m, OpenConfig{})
	q := oneIx.Dense.Vectors(0, 20) // stored rows as queries: ties and near-ties
	want, err := oneIx.Dense.Search(ctx, q, 50)
	if err != nil {
		t.Fatal(err)
	}
	for qi := range want {
		var all []rlsearch.Hit
		for _, ix := range shards {
			hits, err := ix.Dense.Search(ctx, q[qi*32:(qi+1)*32], 50)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits[0] {
				all = append(all, rlsearch.Hit{Row: h.Row + int32(ix.Meta.Shard.FirstRow), Score: h.Score})
			}
		}
		slices.SortFunc(all, rlsearch.CompareHits)
		if got := all[:50]; !slices.Equal(got, want[qi]) {
			t.Fatalf("query %d: merged int8 shards %v, one index %v", qi, got[:5], want[qi][:5])
		}
	}
}

func TestBuildShardsErrors(t *testing.T) {
	ctx := context.Background()
	corpusPath := writeCorpus(t, smallCorpus) // 4 passages
	for _, c := range []struct {
		name string
		cfg  BuildConfig
		want string
	}{
		{"more shards than passages", BuildConfig{Shards: 5}, "fewer than the 5 shards"},
		{"negative", BuildConfig{Shards: -1}, "Shards = -1"},
		{"too many", BuildConfig{Shards: 5000}, "Shards = 5000"},
		{"only out of range", BuildConfig{Shards: 2, Only: []int{2}}, "--shard"},
		{"only repeated", BuildConfig{Shards: 2, Only: []int{1, 1}}, "distinct"},
		{"only without shards", BuildConfig{Only: []int{0}}, "needs BuildConfig.Shards"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Corpus, cfg.Dir = corpusPath, filepath.Join(t.TempDir(), "s")
			if _, err := BuildShards(ctx, cfg); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want ErrShards saying %q", err, c.want)
			}
			if ents, _ := os.ReadDir(cfg.Dir); len(ents) != 0 {
				t.Errorf("a failed build left %d entries", len(ents))
			}
		})
	}
	parent := t.TempDir()
	if _, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: filepath.Join(parent, "x"), Shards: 2}); !errors.Is(err, ErrShards) {
		t.Errorf("Build with Shards: err %v, want ErrShards", err)
	}
	one := filepath.Join(parent, "one")
	if _, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: one}); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: one, Shards: 2}); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "whole corpus") {
		t.Errorf("shards into an index directory: err %v", err)
	}
	dir := filepath.Join(parent, "s")
	if _, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: dir, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildShards(ctx, BuildConfig{Corpus: corpusPath, Dir: dir, Shards: 2}); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing shards: err %v, want a hint at --force", err)
	}
	// Another build (3 shards, other k1) into the directory is refused:
	// its manifest names another build.
	other := BuildConfig{Corpus: corpusPath, Dir: dir, Shards: 3, Only: []int{2}}
	other.BM25.K1 = 1.5
	if _, err := BuildShards(ctx, other); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "holds the shards of build") {
		t.Errorf("another build into the directory: err %v, want ErrShards naming the other build", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ShardDirName(2, 3))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused build published its shard: %v", err)
	}
	if _, err := Open(ctx, dir, OpenConfig{}); err == nil || !strings.Contains(err.Error(), "holds 2 shards") {
		t.Errorf("Open of a shard set: err %v, want a hint to open a shard", err)
	}
	mp := filepath.Join(dir, ManifestFile)
	b, _ := os.ReadFile(mp)
	os.WriteFile(mp, bytes.Replace(b, []byte(`"skipped_empty": 1`), []byte(`"skipped_empty": 2`), 1), 0o644)
	if _, err := ReadManifest(dir); !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), "edited") {
		t.Errorf("edited manifest: err %v, want ErrShards saying it was edited", err)
	}
}
