package index

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// hashEncoder is a deterministic bag-of-words encoder for tests: each
// lower-cased word adds a seeded pseudo-random vector; the sum is normalised.
type hashEncoder struct {
	dim  int
	seed uint64
}

func (h hashEncoder) Dim() int     { return h.dim }
func (h hashEncoder) Name() string { return fmt.Sprintf("hash-%d-%d", h.dim, h.seed) }
func (h hashEncoder) EncodeQueries(ctx context.Context, t []string) ([]float32, error) {
	return h.enc(t), nil
}
func (h hashEncoder) EncodePassages(ctx context.Context, t []string) ([]float32, error) {
	return h.enc(t), nil
}
func (h hashEncoder) enc(texts []string) []float32 {
	out := make([]float32, len(texts)*h.dim)
	for i, t := range texts {
		v := out[i*h.dim : (i+1)*h.dim]
		for _, w := range strings.Fields(strings.ToLower(t)) {
			f := fnv.New64a()
			f.Write([]byte(w))
			rng := rand.New(rand.NewSource(int64(f.Sum64() ^ h.seed)))
			for j := range v {
				v[j] += float32(rng.NormFloat64())
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
	}
	return out
}

const smallCorpus = `{"id": "p1", "contents": "\"Paris\"\nParis is the capital and largest city of France."}
{"id": "p2", "title": "Berlin", "text": "Berlin is the capital of Germany and its largest city."}
{"id": "p3", "title": "Empty", "text": ""}
{"id": "p4", "title": "Mount Everest", "text": "Mount Everest is Earth's highest mountain above sea level."}
{"id": "p5", "title": "Python", "text": "Python is a programming language created by Guido van Rossum."}
`

func writeCorpus(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildOpenRetrieve(t *testing.T) {
	ctx := context.Background()
	enc := hashEncoder{dim: 33, seed: 1}
	dir := filepath.Join(t.TempDir(), "idx")
	meta, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir, Encoder: enc, EncodeBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumDocs != 4 || meta.Skipped != 1 || meta.Dense == nil || meta.Dense.Dim != 33 || math.Abs(meta.BM25.K1-0.9) > 1e-6 || math.Abs(meta.BM25.B-0.4) > 1e-6 {
		t.Fatalf("meta %+v", meta)
	}
	ix, err := Open(ctx, dir, OpenConfig{Encoder: enc, SelfCheckRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rs := ix.Retrievers()
	for _, name := range []string{"bm25", "e5"} {
		r := rs[name]
		if r == nil {
			t.Fatalf("no %s retriever", name)
		}
		hits, err := r.Retrieve(ctx, []string{"capital of Germany", "   ", "Everest mountain"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 3 || len(hits[1]) != 0 {
			t.Fatalf("%s: %d lists, blank query got %v", name, len(hits), hits[1])
		}
		d, _ := ix.Doc(hits[0][0].Row)
		if d.ID != "p2" {
			t.Errorf("%s: top hit for 'capital of Germany' is %s, want p2", name, d.ID)
		}
		d, _ = ix.Doc(hits[2][0].Row)
		if d.ID != "p4" {
			t.Errorf("%s: top hit for 'Everest mountain' is %s, want p4", name, d.ID)
		}
		for _, l := range hits {
			if len(l) > ix.Len() {
				t.Errorf("%s: %d hits for %d passages", name, len(l), ix.Len())
			}
		}
	}
	// BM25-only open of the same index: no e5.
	ix2, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if _, ok := ix2.Retrievers()["e5"]; ok {
		t.Error("e5 served without an encoder")
	}
}

func TestSelfCheckRefusesWrongModel(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir, Encoder: hashEncoder{dim: 16, seed: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		enc  rlsearch.Encoder
		want string
	}{
		{hashEncoder{dim: 8, seed: 1}, "embeds 8 dimensions but the shard"},
		{hashEncoder{dim: 16, seed: 99}, "does not retrieve itself at rank 1"},
	} {
		_, err := Open(ctx, dir, OpenConfig{Encoder: tc.enc, SelfCheckRows: 4})
		if !errors.Is(err, ErrSelfCheck) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrSelfCheck containing %q", tc.enc.Name(), err, tc.want)
		}
	}
	// SelfCheckRows < 0 (rlsearch --self-check=false) serves the mismatched
	// shard; a dimension mismatch is still refused.
	ix, err := Open(ctx, dir, OpenConfig{Encoder: hashEncoder{dim: 16, seed: 99}, SelfCheckRows: -1})
	if err != nil {
		t.Fatalf("SelfCheckRows -1: %v", err)
	}
	if _, ok := ix.Retrievers()["e5"]; !ok {
		t.Error("SelfCheckRows -1: e5 not served")
	}
	ix.Close()
	if _, err := Open(ctx, dir, OpenConfig{Encoder: hashEncoder{dim: 8, seed: 1}, SelfCheckRows: -1}); !errors.Is(err, ErrSelfCheck) {
		t.Errorf("SelfCheckRows -1 with 8 dimensions: %v, want ErrSelfCheck", err)
	}
	bm25only := filepath.Join(t.TempDir(), "bm25only")
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: bm25only}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, bm25only, OpenConfig{Encoder: hashEncoder{dim: 16}}); !errors.Is(err, ErrSelfCheck) || !strings.Contains(err.Error(), "no vector file") {
		t.Errorf("model on a BM25-only index: %v", err)
	}
}

func TestBuildErrorsLeaveNothing(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "idx")
	bad := writeCorpus(t, smallCorpus+"{not json\n")
	_, err := Build(ctx, BuildConfig{Corpus: bad, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "line 6") {
		t.Fatalf("error %v, want one naming line 6", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("failed build left %v", ents)
	}
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, `{"id":"a","text":" "}`), Dir: dir}); err == nil || !strings.Contains(err.Error(), "no non-empty passages") {
		t.Fatalf("all-empty corpus: %v", err)
	}
	// An existing index is kept unless Force is set, and replaced whole with it.
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second build without Force: %v", err)
	}
	one := `{"id": "x", "title": "X", "text": "only passage"}`
	meta, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, one), Dir: dir, Force: true})
	if err != nil || meta.NumDocs != 1 {
		t.Fatalf("forced rebuild: %+v %v", meta, err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Fatalf("forced rebuild left %d entries, want 1", len(ents))
	}
	// --force never deletes a directory that is not an index.
	precious := filepath.Join(t.TempDir(), "precious")
	os.MkdirAll(precious, 0o755)
	os.WriteFile(filepath.Join(precious, "keep.txt"), []byte("keep"), 0o644)
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, one), Dir: precious, Force: true}); err == nil || !strings.Contains(err.Error(), "not an index directory") {
		t.Fatalf("forced build over a non-index directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(precious, "keep.txt")); err != nil {
		t.Fatalf("forced build deleted unrelated data: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, DocsFile)); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("index file mode %v (%v), want 0644", st.Mode(), err)
	}
	if _, err := Build(ctx, BuildConfig{Corpus: "x", Dir: dir, BM25: bm25.Config{B: 2.0}}); err == nil {
		t.Fatal("b = 2 accepted")
	}
	if _, err := Open(ctx, parent, OpenConfig{}); err == nil || !strings.Contains(err.Error(), "not an index directory") {
		t.Fatalf("Open of a non-index: %v", err)
	}
}

// subsetCorpus writes the first n passages of the real corpus to a file.
func subsetCorpus(t *testing.T, n int) string {
	t.Helper()
	src, err := os.Open(filepath.Join(testutil.DataDir(t), "wiki_multihop", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var b strings.Builder
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return writeCorpus(t, b.String())
}

// TestDenseGeneratedModel builds a vector file of 2,000 real passages with
// the generated tiny BERT through ONNX Runtime, then checks that 100 sampled
// passages retrieve themselves at rank 1, and that 64 concurrent requests
// get exactly the serial results.
func TestDenseGeneratedModel(t *testing.T) {
	ctx := context.Background()
	corpusPath := subsetCorpus(t, 2000)
	enc, err := embed.Open(embed.Config{Dir: testutil.Model(t, "tiny"), ORTLib: testutil.ORTLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: corpusPath, Dir: dir, Encoder: enc, DType: ann.FP16}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, OpenConfig{Encoder: enc})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()

	rng := rand.New(rand.NewSource(7))
	rows := rng.Perm(ix.Len())[:100]
	texts := make([]string, len(rows))
	for i, r := range rows {
		d, _ := ix.Doc(int32(r))
		texts[i] = d.Contents
	}
	vecs, err := enc.EncodePassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Dense.Search(ctx, vecs, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if hits[i][0].Row != int32(r) {
			t.Errorf("passage row %d retrieves row %d at rank 1 (score %.5f)", r, hits[i][0].Row, hits[i][0].Score)
		}
	}

	e5 := ix.Retrievers()["e5"]
	queries := make([]string, 64)
	for i := range queries {
		d, _ := ix.Doc(int32(rng.Intn(ix.Len())))
		queries[i] = d.Title() + " " + strings.Join(strings.Fields(d.Text())[:3], " ")
	}
	serial := make([][]rlsearch.Hit, len(queries))
	for i, q := range queries {
		r, err := e5.Retrieve(ctx, []string{q}, 10)
		if err != nil {
			t.Fatal(err)
		}
		serial[i] = r[0]
	}
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e5.Retrieve(ctx, []string{q}, 10)
			if err != nil {
				t.Error(err)
				return
			}
			if !reflect.DeepEqual(r[0], serial[i]) {
				t.Errorf("query %d %q: concurrent result differs from serial", i, q)
			}
		}()
	}
	wg.Wait()
}

// TestBM25ParallelSameHits checks that OpenConfig.BM25Parallel (each query
// of a small request split over row ranges) returns exactly the hits of the
// default one-goroutine-per-query path, and that a negative value is refused.
func TestBM25ParallelSameHits(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: subsetCorpus(t, 3000), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir, OpenConfig{BM25Parallel: -1}); err == nil {
		t.Error("BM25Parallel -1 accepted")
	}
	serial, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	par, err := Open(ctx, dir, OpenConfig{BM25Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer par.Close()
	queries := []string{"who directed the film", "the", "capital city of a european country", "river that flows through a city"}
	for _, k := range []int{1, 10, 100, 3001} {
		for n := 1; n <= len(queries); n++ { // n < 4 takes the parallel path, n = 4 the batch path
			want, err := serial.Retrievers()["bm25"].Retrieve(ctx, queries[:n], k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := par.Retrievers()["bm25"].Retrieve(ctx, queries[:n], k)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("k=%d, %d queries: BM25Parallel=4 hits differ from the serial ones", k, n)
			}
		}
	}
}

// TestMetaMustMatchBM25 edits meta.json's BM25 description: Open and Check
// must refuse it (the file's k1 and b score; meta.json only reports them).
func TestMetaMustMatchBM25(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []struct{ from, to string }{{`"k1": 0.9`, `"k1": -1`}, {`"b": 0.4`, `"b": 7`}} {
		if !strings.Contains(string(raw), edit.from) {
			t.Fatalf("meta.json has no %s:\n%s", edit.from, raw)
		}
		if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(strings.Replace(string(raw), edit.from, edit.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if ix, err := Open(ctx, dir, OpenConfig{}); err == nil {
			ix.Close()
			t.Errorf("%s: Open accepted it", edit.to)
		} else if !strings.Contains(err.Error(), BM25File) {
			t.Errorf("%s: Open error %q does not name %s", edit.to, err, BM25File)
		}
		if err := Check(ctx, dir, CheckConfig{}); err == nil {
			t.Errorf("%s: Check accepted it", edit.to)
		}
	}
}

// TestBM25BatchDuplicateQueries checks the shared work for repeated queries
// in one request: every query gets exactly the hits of searching it alone,
// and each list is the caller's own (changing one leaves the others).
func TestBM25BatchDuplicateQueries(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: subsetCorpus(t, 2000), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := ix.Retrievers()["bm25"]
	queries := []string{"who directed the film", "river city", "who directed the film", "", "river city", "who directed the film", ""}
	got, err := r.Retrieve(ctx, queries, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		want, err := r.Retrieve(ctx, []string{q}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], want[0]) {
			t.Errorf("query %d %q: batch hits %v, alone %v", i, q, got[i], want[0])
		}
	}
	if len(got[0]) == 0 {
		t.Fatal("no hits for a common query: the test checks nothing")
	}
	got[0][0].Row = -7
	if got[2][0].Row == -7 || got[5][0].Row == -7 {
		t.Error("duplicate queries share one hit slice")
	}
}

// nanEncoder embeds passages as hashEncoder does and queries holding
// "nan!" as NaN vectors (a broken dense model).
type nanEncoder struct{ hashEncoder }

func (n nanEncoder) EncodeQueries(ctx context.Context, t []string) ([]float32, error) {
	out := n.enc(t)
	for i, q := range t {
		if strings.Contains(q, "nan!") {
			for j := range n.dim {
				out[i*n.dim+j] = float32(math.NaN())
			}
		}
	}
	return out, nil
}

// TestDenseNonFiniteEmbedding: a NaN query embedding used to give an empty
// list (exact search never ranks a NaN score), a silent wrong answer; now
// the dense retriever fails naming the query, and queries without NaN
// still work.
func TestDenseNonFiniteEmbedding(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ix")
	enc := hashEncoder{dim: 16, seed: 1}
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: dir, Encoder: enc}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, OpenConfig{Encoder: nanEncoder{enc}, SelfCheckRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	e5 := ix.Retrievers()["e5"]
	if hits, err := e5.Retrieve(ctx, []string{"capital of France"}, 2); err != nil || len(hits[0]) != 2 {
		t.Fatalf("finite query: %v, %v", hits, err)
	}
	hits, err := e5.Retrieve(ctx, []string{"capital", " ", "the nan! query"}, 2)
	if !errors.Is(err, ErrNonFiniteEmbedding) || !strings.Contains(err.Error(), `queries[2] "the nan! query"`) {
		t.Fatalf("NaN embedding: %v, %v; want ErrNonFiniteEmbedding naming queries[2]", hits, err)
	}
}
