package peers

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/sdk"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Options)
		field string
	}{
		{"defaults", func(*Options) {}, ""},
		{"threads", func(o *Options) { o.Threads = []int{1, 0} }, "Threads"},
		{"batches", func(o *Options) { o.Batches = []int{-1} }, "Batches"},
		{"ef", func(o *Options) { o.EFSearch = []int{0} }, "EFSearch"},
		{"build", func(o *Options) { o.FaissBuilds = []string{"mkl"} }, "FaissBuilds"},
		{"reps", func(o *Options) { o.Reps = -2 }, "Reps"},
		{"serve system", func(o *Options) { o.Serve.Systems = []string{"elastic"} }, "Serve.Systems"},
		{"serve arrivals", func(o *Options) { o.Serve.Arrivals = "bursty" }, "Serve.Arrivals"},
		{"serve route", func(o *Options) { o.Serve.Routes = []string{RouteBM25, "splade"} }, "Serve.Routes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{}.Defaults()
			tc.edit(&o)
			err := o.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate() = %v, want ErrOptions naming %s", err, tc.field)
			}
		})
	}
	o := Options{Quick: true}.Defaults()
	if o.Reps != 1 || o.Duration != 500*time.Millisecond || o.Serve.Step != time.Second || o.Serve.P99 != 100*time.Millisecond || o.Serve.TopK != 3 {
		t.Errorf("quick defaults %+v: want 1 rep, 0.5 s, 1 s steps, p99 100 ms, topk 3", o)
	}
}

func TestRunUnknownSuite(t *testing.T) {
	if _, err := Run(context.Background(), "mutate", Options{}, nil); !errors.Is(err, ErrUnknownSuite) {
		t.Fatalf("Run(mutate) = %v, want ErrUnknownSuite", err)
	}
	if err := Available("gpu"); !errors.Is(err, ErrUnknownSuite) {
		t.Fatalf("Available(gpu) = %v, want ErrUnknownSuite", err)
	}
}

func TestCheckRetrieve(t *testing.T) {
	doc := `{"id":"d1","contents":"\"T\"\nx"}`
	hit := `{"document":` + doc + `,"score":1.5}`
	tests := []struct {
		name   string
		body   string
		nq, k  int
		scores bool
		want   string
	}{
		{"scores", `{"result":[[` + hit + `,` + hit + `]]}`, 1, 3, true, ""},
		{"bare documents", `{"result":[[` + doc + `],[` + doc + `]]}`, 2, 3, false, ""},
		{"query count", `{"result":[[` + hit + `]]}`, 2, 3, true, "1 result lists for 2 queries"},
		{"too many hits", `{"result":[[` + hit + `,` + hit + `]]}`, 1, 1, true, "2 hits, want 1..1"},
		{"no hits", `{"result":[[]]}`, 1, 3, true, "0 hits"},
		{"missing score", `{"result":[[{"document":` + doc + `}]]}`, 1, 3, true, `"score": number`},
		{"no contents", `{"result":[[{"document":{"id":"x"},"score":1}]]}`, 1, 3, true, "without id or contents"},
		{"not json", `<html>`, 1, 3, true, "not a /retrieve answer"},
		{"error object", `{"error":"bad"}`, 1, 3, true, "0 result lists"},
	}
	for _, tc := range tests {
		err := CheckRetrieve([]byte(tc.body), tc.nq, tc.k, tc.scores)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckRetrieve = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestConfigKeys(t *testing.T) {
	r := bench.Row{Suite: "hnsw", Params: map[string]any{"data": "bge", "n": 5544.0, "dim": 768.0, "k": 10.0, "batch": 64.0,
		"threads": 2.0, "M": 16.0, "efc": 100.0, "ef": 64.0}, Reps: []bench.Rep{{Throughput: 1}}}
	if err := keyFaiss(&r); err != nil {
		t.Fatal(err)
	}
	if want := HNSWConfig("bge", 5544, 768, 16, 100, 64, 10, 64, 2); r.Config != want || want != "bge n=5544 dim=768 M=16 efc=100 ef=64 top10 batch=64 threads=2" {
		t.Fatalf("config %q, want %q", r.Config, want)
	}
	r.Suite = "rerank"
	if err := keyFaiss(&r); !errors.Is(err, ErrPeer) {
		t.Fatalf("keyFaiss(rerank) = %v, want ErrPeer", err)
	}
	if got := ServeConfig("bm25", 3, 1, 64, "poisson", 100*time.Millisecond, 0); got != "retrieve bm25 top3 queries/request=1 concurrency=64 poisson max rate at p99<=100ms" {
		t.Fatalf("serve config %q", got)
	}
}

func requirePython(t *testing.T, mods ...string) {
	t.Helper()
	if _, err := os.Stat(Python); err != nil {
		t.Skipf("peer needs %s (make bench-setup)", Python)
	}
	if len(mods) > 0 {
		if err := pyImports(nil, mods...); err != nil {
			t.Skipf("peer packages not installed (make bench-setup installs them): %v", err)
		}
	}
}

// TestProgramsParity checks that CPython over programs_peer.py's stub and
// the Go runtime over the Go stub print the same observation for every
// program of the suite, so that programs/s compare equal work.
func TestProgramsParity(t *testing.T) {
	requirePython(t)
	progs := StubPrograms(64)
	dir := t.TempDir()
	p, err := script(dir, "programs_peer.py")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "p.json")
	raw, _ := json.Marshal(progs)
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(Python, p, "--observations", f).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(progs) {
		t.Fatalf("%d observations for %d programs", len(lines), len(progs))
	}
	rt, err := stubRuntime()
	if err != nil {
		t.Fatal(err)
	}
	for i, src := range progs {
		var want string
		if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
			t.Fatal(err)
		}
		got := rt.Run(context.Background(), sdk.Request{Code: src, Question: "stub question"}, nil)
		if got.Code != sdk.CodeOK || got.Observation != want || want == "" {
			t.Fatalf("program %d (%s %s):\n%s\nstarlark %q\ncpython  %q", i, got.Code, got.Error, src, got.Observation, want)
		}
	}
}

func TestRunPrograms(t *testing.T) {
	requirePython(t)
	rows, err := Run(context.Background(), "programs", Options{Threads: []int{1, 2}, Reps: 2, Duration: 100 * time.Millisecond, WorkDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkPaired(t, rows, 4, SystemOurs, "cpython-")
	for _, r := range rows {
		if len(r.Reps) != 2 || r.Unit != "programs/s" {
			t.Fatalf("row %s/%s: %d reps unit %q, want 2 reps of programs/s", r.System, r.Config, len(r.Reps), r.Unit)
		}
		for _, rp := range r.Reps {
			if !(rp.Throughput > 0) || rp.Ops < 1 || rp.P50ms > rp.P99ms || len(rp.Latencies) == 0 {
				t.Fatalf("row %s/%s rep %+v: want throughput, ops, p50 ≤ p99, latencies", r.System, r.Config, rp)
			}
		}
	}
}

// checkPaired checks n rows whose Configs come in pairs of ours and a peer.
func checkPaired(t *testing.T, rows []bench.Row, n int, a, bPrefix string) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	bySys := map[string]map[string]bool{}
	for _, r := range rows {
		k := r.System
		if strings.HasPrefix(k, bPrefix) {
			k = bPrefix
		}
		if bySys[k] == nil {
			bySys[k] = map[string]bool{}
		}
		bySys[k][r.Config] = true
	}
	if len(bySys) != 2 || len(bySys[a]) != n/2 {
		t.Fatalf("systems %v: want %s and %s* with %d configs each", bySys, a, bPrefix, n/2)
	}
	for c := range bySys[a] {
		if !bySys[bPrefix][c] {
			t.Fatalf("config %q of %s has no peer row", c, a)
		}
	}
}

// writeFvecs writes rows of x ([n][d]) as .fvecs.
func writeFvecs(t *testing.T, path string, x [][]float32) {
	var buf bytes.Buffer
	for _, row := range x {
		binary.Write(&buf, binary.LittleEndian, int32(len(row)))
		binary.Write(&buf, binary.LittleEndian, row)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randUnit(rng *rand.Rand, n, d int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, d)
		var s float64
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			s += float64(v[j] * v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(s))
		}
		out[i] = v
	}
	return out
}

func TestRunFaiss(t *testing.T) {
	requirePython(t, "faiss", "numpy")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	b, q := filepath.Join(dir, "b.fvecs"), filepath.Join(dir, "q.fvecs")
	writeFvecs(t, b, randUnit(rng, 600, 16))
	writeFvecs(t, q, randUnit(rng, 20, 16))
	o := Options{Threads: []int{1}, Batches: []int{1, 8}, Reps: 1, Duration: 30 * time.Millisecond, EFSearch: []int{64},
		WorkDir: dir, Vectors: []VectorSet{{Name: "rand16", Base: b, Queries: q}}}
	for _, suite := range []string{"flat", "hnsw"} {
		rows, err := Run(context.Background(), suite, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows)%2 != 0 || len(rows) == 0 {
			t.Fatalf("%s: %d rows, want one per batch size per build", suite, len(rows))
		}
		for _, r := range rows {
			lib := strings.HasPrefix(r.System, "faiss-") || (suite == "hnsw" && strings.HasPrefix(r.System, "hnswlib-"))
			if !lib || !strings.HasPrefix(r.Config, "rand16 n=600 dim=16 ") || !(r.Reps[0].Throughput > 0) {
				t.Fatalf("%s row %+v", suite, r)
			}
			if suite == "hnsw" && r.Reps[0].Extra["recall@10"] < 0.9 {
				t.Fatalf("hnsw recall@10 %v at ef=64 on 600 vectors: want ≥ 0.9 (%s)", r.Reps[0].Extra["recall@10"], r.System)
			}
		}
		if avx2Built(o.Defaults()) {
			found := false
			for _, r := range rows {
				found = found || strings.HasSuffix(r.System, "-avx2") && strings.Contains(r.Note, "AVX2")
			}
			if !found {
				t.Fatalf("the AVX2 build is there but no row is faiss's AVX2 build: %+v", rows)
			}
		}
		for _, r := range rows {
			t.Logf("%s: %s %s %.0f q/s — %s", suite, r.System, r.Config, r.Reps[0].Throughput, r.Note)
		}
	}
}

// buildRlsearch builds cmd/rlsearch into dir.
func buildRlsearch(t *testing.T, dir string) string {
	t.Helper()
	root := findRoot()
	if root == "" {
		t.Fatal("module root not found")
	}
	bin := filepath.Join(dir, "rlsearch")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rlsearch")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tinyCorpus writes a corpus and questions whose answers are unambiguous
// under any BM25.
func tinyCorpus(t *testing.T, dir string) (corpus, questions string) {
	var c, q bytes.Buffer
	topics := []string{"volcano eruption lava", "violin concerto orchestra", "glacier ice melting", "chess opening gambit",
		"espresso coffee beans", "satellite orbit launch", "honeybee hive pollen", "marathon runner finish"}
	for i, tp := range topics {
		fmt.Fprintf(&c, `{"id": "doc-%d", "contents": "\"Topic %d\"\nA passage about %s and little else."}`+"\n", i, i, tp)
		fmt.Fprintf(&q, `{"question": "tell me about %s"}`+"\n", tp)
	}
	corpus, questions = filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "questions.jsonl")
	os.WriteFile(corpus, c.Bytes(), 0o644)
	os.WriteFile(questions, q.Bytes(), 0o644)
	return corpus, questions
}

// tinyServeOptions are the serve end-to-end tests' Options: rlsearch built
// into a fresh work directory with the tiny corpus, one repetition, a short
// serve ramp on route.
func tinyServeOptions(t *testing.T, route string) Options {
	t.Helper()
	dir := t.TempDir()
	corpus, questions := tinyCorpus(t, dir)
	return Options{Rlsearch: buildRlsearch(t, dir), Corpus: corpus, Questions: questions, WorkDir: dir, Reps: 1,
		Serve: ServeOptions{Step: 200 * time.Millisecond, Start: 32, Max: 128, Precision: 0.5, MinRequests: -1,
			Routes: []string{route}}}.Defaults()
}

// TestServeShapesAgree starts `rlsearch serve` and the Python peer on a
// tiny corpus and checks that both answer /retrieve with the same shape
// and the same top document, then runs a short serve suite end to end.
func TestServeShapesAgree(t *testing.T) {
	requirePython(t, "fastapi", "uvicorn", "xapian")
	if testing.Short() {
		t.Skip("builds rlsearch and starts two servers")
	}
	o := tinyServeOptions(t, RouteBM25)
	ctx := context.Background()
	ix, err := oursIndex(ctx, o, o.Rlsearch, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := startOurs(ctx, o, o.Rlsearch, ix, "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer ours.stop()
	peer, err := startSearchR1(ctx, o, "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.stop()
	for _, scores := range []bool{true, false} {
		body, _ := json.Marshal(map[string]any{"queries": []string{"volcano lava", "espresso beans", "chess gambit"}, "topk": 2, "return_scores": scores})
		var tops [2][]string
		for i, s := range []*server{ours, peer} {
			resp, err := http.Post(s.url+"/retrieve", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d: %s", s.name, resp.StatusCode, buf.String())
			}
			if err := CheckRetrieve(buf.Bytes(), 3, 2, scores); err != nil {
				t.Fatalf("%s (return_scores=%v): %v\n%s", s.name, scores, err, buf.String())
			}
			var ans struct {
				Result [][]map[string]any `json:"result"`
			}
			json.Unmarshal(buf.Bytes(), &ans)
			for _, hits := range ans.Result {
				d := hits[0]
				if scores {
					d = d["document"].(map[string]any)
				}
				tops[i] = append(tops[i], d["id"].(string))
			}
		}
		if strings.Join(tops[0], ",") != "doc-0,doc-4,doc-3" || strings.Join(tops[1], ",") != strings.Join(tops[0], ",") {
			t.Fatalf("top documents: rlsearch %v, python peer %v; want doc-0, doc-4, doc-3 from both", tops[0], tops[1])
		}
	}
	ours.stop()
	peer.stop()
	runServeSuite(t, ctx, o, "")
}

// runServeSuite runs the serve suite under o and checks its rows: both
// systems paired on 4 rows, each one repetition with a rate and a p99, all
// of route (any route when "").
func runServeSuite(t *testing.T, ctx context.Context, o Options, route string) {
	t.Helper()
	var log bytes.Buffer
	rows, err := Run(ctx, "serve", o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("serve suite:\n%s", log.String())
	checkPaired(t, rows, 4, SystemOurs, peerSearchR1)
	for _, r := range rows {
		if (route != "" && r.Params["route"] != route) || r.Unit != "requests/s" || len(r.Reps) != 1 || !(r.Reps[0].Throughput > 0) || r.Reps[0].P99ms <= 0 {
			t.Fatalf("row %s / %s %v: %+v", r.System, r.Config, r.Params, r.Reps)
		}
	}
}
