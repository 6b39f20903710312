package sdk

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/stubsdk"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// BenchmarkBatch runs 512 typical programs (typed programs over a small
// query pool, as the rollouts of a few prompts write them, plus free-form
// loops) on the real wiki_multihop index: as one coalesced and memoised
// batch, memoised only, neither, and one by one with Run.
//
//	go test ./sdk -run XXX -bench Batch -benchtime 3x
func BenchmarkBatch(b *testing.B) {
	for _, route := range []string{"bm25", "e5"} {
		b.Run("route="+route, func(b *testing.B) {
			var ix *index.Index
			modes := []Mode{ModeSparse}
			if route == "bm25" {
				ix = wikiIndex(b)
			} else {
				ix = denseIndex(b)
				modes = []Mode{ModeDense, ModeFuse}
			}
			reqs := typicalRequests(b, 512, modes, 11)
			// The stub reranker costs nothing, so the numbers are the
			// runtime's and the index's, not a model's.
			rt := newRT(b, ix, Config{Reranker: stubReranker{}})
			for _, mode := range []string{"coalesce+memo", "memo", "none", "one-by-one"} {
				b.Run("mode="+mode, func(b *testing.B) {
					ctx := context.Background()
					var calls int
					for b.Loop() {
						var res []Result
						switch mode {
						case "coalesce+memo":
							res = rt.RunBatch(ctx, reqs, BatchOptions{})
						case "memo":
							res = rt.RunBatch(ctx, reqs, BatchOptions{NoCoalesce: true})
						case "none":
							res = rt.RunBatch(ctx, reqs, BatchOptions{NoMemo: true})
						default:
							res = make([]Result, len(reqs))
							for i, r := range reqs {
								res[i] = rt.Run(ctx, r, nil)
							}
						}
						calls = 0
						for _, r := range res {
							if r.Code != CodeOK && r.Code != CodeBudget {
								b.Fatalf("%s: %s", r.Code, r.Error)
							}
							calls += r.Stats.RetrievalCalls
						}
					}
					b.ReportMetric(float64(len(reqs)*b.N)/b.Elapsed().Seconds(), "programs/s")
					b.ReportMetric(float64(calls), "calls/batch")
				})
			}
		})
	}
}

// The stub SDK of the overhead benchmark (internal/stubsdk, with its
// Python twin stub_sdk.py).
type (
	stubRetriever = stubsdk.Retriever
	stubCorpus    = stubsdk.Corpus
	stubReranker  = stubsdk.Reranker
)

// overheadPrograms are the programs both interpreters run: canonical typed
// programs and a free-form one with a loop, a helper and a sort.
func overheadPrograms() []string {
	ps := []string{
		Program{Queries: []string{"who directed Robin Hood", "Otto Bathurst"}, Mode: ModeFuse, Width: 20, Rerank: 5, Print: 3}.Source(),
		Program{Queries: []string{"a"}, Mode: ModeSparse, Width: 10, Print: 3}.Source(),
		Program{Queries: []string{"a", "b", "c"}, Mode: ModeDense, Width: 50, Rerank: 10, Print: 5}.Source(),
		`def best(q, k):
    docs = fuse([dense(q, k=k), sparse(q, k=k)])
    return [d for d in docs if d.score > 0][:k]

pool = []
for q in ["first hop", "second hop", question]:
    pool.extend(best(q, 20))
pool = dedup(sorted(pool, key=lambda d: d.score, reverse=True))
titles = {}
for d in pool:
    titles[d.title] = titles.get(d.title, 0) + 1
print(rerank(question, pool, k=3))
print("distinct titles:", len(titles))
`,
	}
	return ps
}

// BenchmarkStarlarkOverhead measures the interpreter cost per program:
// the Go runtime (parse, resolve, run in Starlark) against a stub SDK with
// no index, and CPython 3 (/usr/bin/python3, testdata/stub_sdk.py) running
// the same programs with exec() against the equivalent stub, in the same
// run. Both print identical observations (checked).
func BenchmarkStarlarkOverhead(b *testing.B) {
	progs := overheadPrograms()
	rt, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"e5": stubRetriever{Route: "e5"}, "bm25": stubRetriever{Route: "bm25"}},
		Docs:       stubCorpus{}, Reranker: stubReranker{}, MaxHeapBytes: -1,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range progs {
		if r := rt.Run(ctx, Request{Code: p, Question: "stub question"}, nil); r.Code != CodeOK {
			b.Fatalf("%s %s\n%s", r.Code, r.Error, p)
		}
	}
	b.Run("interp=sandbox", func(b *testing.B) {
		n := 0
		for b.Loop() {
			rt.Run(ctx, Request{Code: progs[n%len(progs)], Question: "stub question"}, nil)
			n++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/program")
	})
	b.Run("interp=cpython", func(b *testing.B) {
		if _, err := os.Stat(testutil.Python); err != nil {
			b.Skip("no " + testutil.Python)
		}
		f := filepath.Join(b.TempDir(), "programs.json")
		stubPy := writeStubPy(b)
		raw, _ := json.Marshal(progs)
		os.WriteFile(f, raw, 0o644)
		// One interpreter run (500 passes over the programs) per benchmark,
		// whatever b.N: the metric is its own per-program time.
		var us float64
		done := false
		for b.Loop() {
			if done {
				continue
			}
			done = true
			out, err := exec.Command(testutil.Python, stubPy, f, "500").CombinedOutput()
			if err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			if us, err = strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(us, "µs/program")
	})
}

// TestStubParity checks that the Go stub SDK and stubsdk's stub_sdk.py print
// the same observations, so BenchmarkStarlarkOverhead compares equal work.
func TestStubParity(t *testing.T) {
	if _, err := os.Stat(testutil.Python); err != nil {
		t.Skip("no " + testutil.Python)
	}
	rt, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"e5": stubRetriever{Route: "e5"}, "bm25": stubRetriever{Route: "bm25"}},
		Docs:       stubCorpus{}, Reranker: stubReranker{},
	})
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
sys.path.insert(0, sys.argv[2])
import stub_sdk
for src in json.load(open(sys.argv[1])):
    out = []
    exec(compile(src, "program", "exec"), stub_sdk.make_sdk(out))
    print(json.dumps("".join(out)))
`
	f := filepath.Join(t.TempDir(), "p.json")
	raw, _ := json.Marshal(overheadPrograms())
	os.WriteFile(f, raw, 0o644)
	start := time.Now()
	out, err := exec.Command(testutil.Python, "-c", script, f, filepath.Dir(writeStubPy(t))).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, p := range overheadPrograms() {
		var want string
		if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
			t.Fatal(err)
		}
		got := rt.Run(context.Background(), Request{Code: p, Question: "stub question"}, nil)
		if got.Observation != want {
			t.Fatalf("program %d:\nstarlark %q\ncpython  %q", i, got.Observation, want)
		}
	}
	t.Logf("parity checked in %v", time.Since(start))
}

// writeStubPy writes stubsdk.Python as stub_sdk.py into a temporary
// directory and returns its path.
func writeStubPy(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "stub_sdk.py")
	if err := os.WriteFile(p, []byte(stubsdk.Python), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}
