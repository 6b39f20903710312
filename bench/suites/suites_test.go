package suites

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// work is shared by the tests of this package so that the wiki index and
// the hybrid collection are built once.
var work string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rlsearch-bench-suites-")
	if err != nil {
		panic(err)
	}
	work = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runSuite runs one suite in a tiny configuration (1 ms repetitions, 2
// repetitions, threads 1 and 2) and returns its report.
func runSuite(t *testing.T, name string, set map[string]string) *bench.Report {
	t.Helper()
	data := testutil.DataDir(t)
	rep, err := bench.Run(context.Background(), bench.Options{Suites: []string{name}, Reps: 2, Quick: true, MinTime: time.Millisecond,
		Data: data, Work: work, Root: testutil.RepoRoot(t), Threads: []int{1, 2}, Set: set}, All())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkRows fails t unless rep has rows of ours only (units among those
// in unit, space-separated), each with 2
// repetitions of positive throughput, and nothing skipped.
func checkRows(t *testing.T, rep *bench.Report, unit string, minRows int) {
	t.Helper()
	for _, s := range rep.Skipped {
		t.Errorf("skipped: %+v", s)
	}
	if len(rep.Rows) < minRows {
		t.Fatalf("%d rows, want at least %d", len(rep.Rows), minRows)
	}
	for _, r := range rep.Rows {
		if err := r.Validate(); err != nil {
			t.Errorf("row %s: %v", r.Config, err)
		}
		if r.System != bench.Ours || !strings.Contains(unit, r.Unit) || len(r.Reps) != 2 || (r.Suite != "flat" && r.Suite != "hnsw" && r.Config != bench.Key(r.Params)) {
			t.Errorf("row %+v: want ours, unit %s, 2 reps, Config = Key(Params) (flat, hnsw: the faiss peer's key)", r, unit)
		}
		for _, p := range r.Reps {
			if p.Throughput <= 0 || p.Ops <= 0 || p.P50ms <= 0 || p.P99ms < p.P50ms {
				t.Errorf("row %s: rep %+v: want positive throughput, ops and ordered percentiles", r.Config, p)
			}
		}
	}
}

func TestBM25(t *testing.T) {
	rep := runSuite(t, "bm25", map[string]string{"bm25.batch": "1,8"})
	checkRows(t, rep, "queries/s", 3) // batch 1; batch 8 on 1 and 2 threads
}

func TestBM25Generated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second index")
	}
	rep := runSuite(t, "bm25", map[string]string{"bm25.batch": "8", "bm25.gen": "19000"})
	checkRows(t, rep, "queries/s", 6)
	if !strings.Contains(rep.Rows[len(rep.Rows)-1].Config, "corpus=gen19000 k=10 n=19000") {
		t.Errorf("last row %q: want the generated corpus of 19,000", rep.Rows[len(rep.Rows)-1].Config)
	}
}

func TestFlatRecallIsExact(t *testing.T) {
	rep := runSuite(t, "flat", map[string]string{"flat.data": "bge-base,sift10k,fmnist", "flat.n": "700", "flat.queries": "40", "flat.batch": "1,16"})
	checkRows(t, rep, "queries/s", 12)
	for _, r := range rep.Rows {
		if rc, ok := r.ExtraMedian("recall@10"); !ok || rc < 0.999 {
			t.Errorf("%s: recall@10 %v, want 1 (exact fp32 search against exact truth)", r.Config, rc)
		}
	}
}

func TestHNSW(t *testing.T) {
	rep := runSuite(t, "hnsw", map[string]string{"hnsw.data": "bge-base", "hnsw.n": "1500", "hnsw.queries": "50", "hnsw.ef": "16,128"})
	checkRows(t, rep, "queries/s", 4)
	lo, _ := rep.Rows[0].ExtraMedian("recall@10")
	hi, _ := rep.Rows[len(rep.Rows)-1].ExtraMedian("recall@10")
	if !(hi >= lo && hi > 0.9) {
		t.Errorf("recall@10 at ef 16 %v, at ef 128 %v: want a rise to above 0.9", lo, hi)
	}
}

// requireRan fails or skips t (RLSEARCH_REQUIRE_NATIVE) when the suite was
// skipped for a missing native part.
func requireRan(t *testing.T, rep *bench.Report) {
	t.Helper()
	for _, s := range rep.Skipped {
		if strings.HasPrefix(s.Reason, bench.ErrSkip.Error()) {
			testutil.RequireNative(t, s.Reason)
		}
	}
}

func TestEncode(t *testing.T) {
	lib := testutil.ORTLib(t)
	model := testutil.Model(t, "tiny")
	rep := runSuite(t, "encode", map[string]string{"encode.model": model, "encode.ort": lib, "encode.len": "32", "encode.batch": "1,4"})
	requireRan(t, rep)
	checkRows(t, rep, "passages/s queries/s", 4)
}

func TestRerank(t *testing.T) {
	rep := runSuite(t, "rerank", map[string]string{"rerank.docs": "3", "rerank.ort": testutil.ORTLib(t)})
	requireRan(t, rep)
	checkRows(t, rep, "pairs/s", 1)
}

func TestPrograms(t *testing.T) {
	rep := runSuite(t, "programs", map[string]string{"programs.batch": "16", "programs.group": "4"})
	checkRows(t, rep, "programs/s", 3)
	for _, r := range rep.Rows {
		for _, p := range r.Reps {
			if p.Errors != 0 {
				t.Errorf("%s: %d programs ended with an error code", r.Config, p.Errors)
			}
		}
	}
	if _, err := os.Stat(work + "/programs/" + ProgramsFile(16, 4, 1)); err != nil {
		t.Errorf("workload file for peers: %v", err)
	}
}

func TestProgramRequests(t *testing.T) {
	a := ProgramRequests([]string{"q1", "q2", "q3"}, 12, 4, 7)
	b := ProgramRequests([]string{"q1", "q2", "q3"}, 12, 4, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d differs between equal seeds", i)
		}
		if want := []string{"q1", "q2", "q3"}[i/4]; a[i].Question != want {
			t.Errorf("request %d question %q, want %q (groups of 4)", i, a[i].Question, want)
		}
	}
}

func TestMutate(t *testing.T) {
	rep := runSuite(t, "mutate", map[string]string{"mutate.batch": "2"})
	checkRows(t, rep, "mutations/s", 2)
	for _, r := range rep.Rows {
		if _, ok := r.ExtraMedian("verified_found/s"); !ok {
			t.Errorf("%s: no verified_found/s", r.Config)
		}
	}
}

func TestHybrid(t *testing.T) {
	rep := runSuite(t, "hybrid", map[string]string{"hybrid.n": "16"})
	checkRows(t, rep, "programs/s", 3)
}

func TestRewards(t *testing.T) {
	rep := runSuite(t, "rewards", map[string]string{"rewards.batch": "8"})
	checkRows(t, rep, "scores/s", 4)
}

func TestGPUSkipsWithoutDevice(t *testing.T) {
	rep := runSuite(t, "gpu", nil)
	if len(rep.Rows) > 0 {
		checkRows(t, rep, "queries/s", 3)
		return
	}
	if os.Getenv("REQUIRE_GPU") == "1" {
		t.Fatalf("REQUIRE_GPU=1 but the gpu suite was skipped: %+v", rep.Skipped)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "skipped: no GPU") {
		t.Errorf("skipped %+v, want one \"skipped: no GPU\" line", rep.Skipped)
	}
}

func TestBadSettings(t *testing.T) {
	for _, set := range []map[string]string{{"flat.batch": "0"}, {"flat.data": "nope"}, {"flat.dtype": "fp8"}} {
		rep := runSuite(t, "flat", set)
		if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, bench.ErrConfig.Error()) {
			t.Errorf("set %v: skipped %+v, want one bad-config failure", set, rep.Skipped)
		}
	}
}

func TestReadVecsErrors(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{"empty.fvecs": nil, "ragged.fvecs": {3, 0, 0, 0, 1, 2}, "zero-dim.fvecs": {0, 0, 0, 0}} {
		p := dir + "/" + name
		os.WriteFile(p, data, 0o644)
		if _, _, err := readVecs(p, false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	p := dir + "/short.ivecs"
	os.WriteFile(p, []byte{5, 0, 0, 0, 1, 0, 0, 0}, 0o644)
	if _, err := readIvecs(p, 10); err == nil {
		t.Errorf("truncated ivecs: no error")
	}
}

func TestLucenePeer(t *testing.T) {
	if _, _, err := luceneClasspath(); err != nil {
		t.Skipf("Lucene peer: %v", err)
	}
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	rep, err := bench.Run(context.Background(), bench.Options{Suites: []string{"bm25"}, Reps: 1, Quick: true, MinTime: time.Millisecond,
		Data: testutil.DataDir(t), Work: work, Root: testutil.RepoRoot(t), Threads: []int{1}, Peers: true,
		Set: map[string]string{"bm25.batch": "16", "bm25.lucene_warmup": "0.2"}}, All())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) > 0 {
		t.Fatalf("skipped: %+v", rep.Skipped)
	}
	var lucene []bench.Row
	for _, r := range rep.Rows {
		if strings.HasPrefix(r.System, "lucene-8") {
			lucene = append(lucene, r)
			if peers := rep.Peer(r); len(peers) != 1 || peers[0].System != bench.Ours {
				t.Errorf("lucene row %q has no matching row of ours", r.Config)
			}
		}
	}
	if len(lucene) != 2 {
		t.Errorf("%d lucene rows, want 2 (batch 1 and 16 on one thread)", len(lucene))
	}
}

func TestFlatGeneratedVectors(t *testing.T) {
	rep := runSuite(t, "flat", map[string]string{"flat.data": "clustered-2000x31,uniform-500x8", "flat.batch": "1,7"})
	checkRows(t, rep, "queries/s", 8)
	for _, r := range rep.Rows {
		if rc, _ := r.ExtraMedian("recall@10"); rc < 0.999 {
			t.Errorf("%s: recall@10 %v, want 1", r.Config, rc)
		}
	}
}

func TestGenVectorSetCache(t *testing.T) {
	dir := t.TempDir()
	a, err := GenVectorSet(context.Background(), "clustered-300x5", 3, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenVectorSet(context.Background(), "clustered-300x5", 3, dir) // read back from the files
	if err != nil {
		t.Fatal(err)
	}
	c, _ := GenVectorSet(context.Background(), "clustered-300x5", 3, "") // regenerated
	for i := range a.Base {
		if a.Base[i] != b.Base[i] || a.Base[i] != c.Base[i] {
			t.Fatalf("base value %d: %v / %v / %v: generated, read back and regenerated sets differ", i, a.Base[i], b.Base[i], c.Base[i])
		}
	}
	if a.NQ != genQueries || len(b.Truth) != genQueries || b.Truth[5][0] != a.Truth[5][0] {
		t.Errorf("queries %d, truth rows %d: want %d and equal truth", a.NQ, len(b.Truth), genQueries)
	}
	for _, bad := range []string{"gaussian-10x3", "uniform-0x3", "uniform-10x0", "uniform-10"} {
		if _, err := GenVectorSet(context.Background(), bad, 1, ""); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestGenTextVectors: the text generator is deterministic (rows depend on
// the seed and their index only, so files are byte-identical), reuses
// complete files, writes the exact top-100 (the chunked merge equals one
// exact search over the whole base) and has the structure it claims: unit
// vectors, random pairs far less similar than a query and its top hit.
func TestGenTextVectors(t *testing.T) {
	ctx := context.Background()
	defer func(c int) { textChunk = c }(textChunk)
	textChunk = 700                    // 3 chunks, the last short
	for _, dim := range []int{8, 96} { // 8 < the latent dimension: latent = dim
		const n = 2000
		a, b := t.TempDir(), t.TempDir()
		if err := GenTextVectors(ctx, n, dim, 5, a, nil); err != nil {
			t.Fatal(err)
		}
		if err := GenTextVectors(ctx, n, dim, 5, b, nil); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"base.fvecs", "query.fvecs", "groundtruth.ivecs"} {
			x, _ := os.ReadFile(filepath.Join(a, f))
			y, _ := os.ReadFile(filepath.Join(b, f))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Fatalf("dim %d: %s differs between two runs (%d, %d bytes)", dim, f, len(x), len(y))
			}
		}
		st, _ := os.Stat(filepath.Join(a, "base.fvecs"))
		if err := GenTextVectors(ctx, n, dim, 5, a, nil); err != nil {
			t.Fatal(err)
		}
		if st2, _ := os.Stat(filepath.Join(a, "base.fvecs")); !st2.ModTime().Equal(st.ModTime()) {
			t.Errorf("dim %d: complete files were rewritten", dim)
		}
		base, _ := readFvecsN(filepath.Join(a, "base.fvecs"), n, dim)
		q, _ := readFvecsN(filepath.Join(a, "query.fvecs"), genQueries, dim)
		got, _ := readIvecs(filepath.Join(a, "groundtruth.ivecs"), textTruthK)
		want, _ := exactTruth(ctx, base, q, dim, textTruthK)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("dim %d: chunked truth differs from one exact search", dim)
		}
		var rnd, top float64
		for i := 0; i < 200; i++ {
			var s, r, tp float64
			for j := 0; j < dim; j++ {
				x := float64(base[i*dim+j])
				s += x * x
				r += x * float64(base[(i+1000)*dim+j])
				tp += float64(q[i*dim+j]) * float64(base[int(got[i][0])*dim+j])
			}
			if math.Abs(s-1) > 1e-4 {
				t.Fatalf("dim %d: row %d has squared norm %v", dim, i, s)
			}
			rnd, top = rnd+r/200, top+tp/200
		}
		if top < rnd+0.2 {
			t.Errorf("dim %d: mean cosine of a query and its top hit %.3f, of random pairs %.3f: no cluster structure", dim, top, rnd)
		}
		t.Logf("dim %d: mean cosine random pairs %.3f, query–top hit %.3f", dim, rnd, top)
	}
	if vs, err := GenVectorSet(ctx, "text-500x16", 2, ""); err != nil || vs.N != 500 || len(vs.Truth) != genQueries || len(vs.Truth[0]) != 10 {
		t.Fatalf("GenVectorSet text-500x16: %v", err)
	}
}

// TestHNSWCompressedSuite: hnsw.compressed adds a compressed row per case
// with its memory per vector: the float32 graph's less 3 bytes per value.
func TestHNSWCompressedSuite(t *testing.T) {
	rep := runSuite(t, "hnsw", map[string]string{"hnsw.data": "text-3000x64", "hnsw.ef": "64", "hnsw.compressed": "true", "hnsw.batch": "1"})
	checkRows(t, rep, "queries/s", 4)
	var plain, comp float64
	for _, r := range rep.Rows {
		rc, _ := r.ExtraMedian("recall@10")
		bpv, _ := r.ExtraMedian("bytes/vector")
		if rc < 0.9 {
			t.Errorf("%s: recall@10 %v", r.Config, rc)
		}
		if strings.HasSuffix(r.Config, " compressed") {
			comp = bpv
		} else {
			plain = bpv
		}
	}
	// float32 rows (4·64 bytes) become int8 codes (64 + 8·64/3000): the
	// graph is the same.
	if want := plain - 3*64 + 8*64/3000.0; math.Abs(comp-want) > 0.01 {
		t.Errorf("bytes/vector compressed %v, float32 %v: want %v", comp, plain, want)
	}
}
