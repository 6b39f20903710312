package sdk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/internal/transcript"
)

// The Python differential suite (testdata/pydiff, README "Python
// differential suite"): programs written the way a Qwen3 RPL policy writes
// them, their observations under CPython 3.11 with the reference SDK
// testdata/pydiff/stub_sdk.py (goldens), and the same programs through the
// sandbox over the Go twin of its stub retriever below.

// pydiffUpdateSandbox re-pins the deliberate differences. The goldens are
// regenerated under -update, the flag internal/transcript defines for the
// whole test binary (transcript.Updating): a second flag named "update" in
// this package would panic at start-up.
var pydiffUpdateSandbox = flag.Bool("update-sandbox", false, "TestPythonDifferential: re-pin testdata/pydiff/sandbox/*.txt (the deliberate differences) from the sandbox")

// pydiffEnforce makes TestPythonDifferential fail under pydiffMinShare
// byte-identical observations, or on a difference not listed in
// deliberate.txt. The lead turns it on once the Python front end lands;
// RLSEARCH_PYDIFF_MIN (a share such as 0.97) enforces it before.
const pydiffEnforce = true

// pydiffMinShare is the bar: ≥ 97% byte-identical observations.
const pydiffMinShare = 0.97

const pydiffDir = "testdata/pydiff"

// pydiffQuestion is the question of a program without a "# question:"
// first line (stub_sdk.DEFAULT_QUESTION).
const pydiffQuestion = "who directed the 2018 film Robin Hood"

// pydiffHostileTimeout is the time budget of hostile programs: short, so
// that a deadline that does not hold fails the test quickly.
const pydiffHostileTimeout = 2 * time.Second

// pydiffDocs is testdata/pydiff/docs.jsonl (64 wiki_multihop passages),
// row = line.
type pydiffDocs struct {
	docs  []rlsearch.Document
	terms [][]string
	memo  sync.Map // route + "\x00" + query → []rlsearch.Hit, the full ranking
}

func loadPydiffDocs(tb testing.TB) *pydiffDocs {
	tb.Helper()
	f, err := os.Open(filepath.Join(pydiffDir, "docs.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	c := &pydiffDocs{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d rlsearch.Document
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatal(err)
		}
		c.docs = append(c.docs, d)
		c.terms = append(c.terms, pydiffTerms(d.Contents))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return c
}

// Doc implements Corpus.
func (c *pydiffDocs) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || int(row) >= len(c.docs) {
		return rlsearch.Document{}, fmt.Errorf("pydiff: row %d out of range", row)
	}
	return c.docs[row], nil
}

// pydiffTerms is stub_sdk.terms: maximal runs of ASCII letters and digits,
// ASCII-lowercased.
func pydiffTerms(s string) []string {
	var out []string
	var cur []byte
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= '0' && b <= '9':
			cur = append(cur, b)
		case b >= 'A' && b <= 'Z':
			cur = append(cur, b+32)
		case len(cur) > 0:
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

func pydiffDistinct(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func pydiffSet(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// pydiffRetriever is stub_sdk's sparse (route "bm25") or dense ("e5")
// scoring; see the docstring of stub_sdk.py for the formulas.
type pydiffRetriever struct {
	name string
	c    *pydiffDocs
}

func (r pydiffRetriever) Name() string { return r.name }

func (r pydiffRetriever) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for j, q := range qs {
		hs := r.ranked(q)
		out[j] = slices.Clone(hs[:min(k, len(hs))])
	}
	return out, nil
}

// ranked is the full ranking for q, memoised (as stub_sdk._ranked is), so
// that the benchmark measures the interpreter, not the stub.
func (r pydiffRetriever) ranked(q string) []rlsearch.Hit {
	key := r.name + "\x00" + q
	if v, ok := r.c.memo.Load(key); ok {
		return v.([]rlsearch.Hit)
	}
	hs := r.score(q)
	r.c.memo.Store(key, hs)
	return hs
}

// score ranks every document for q (stub_sdk._sparse_scores or _dense_scores,
// sorted): descending score, ties by ascending row.
func (r pydiffRetriever) score(q string) []rlsearch.Hit {
	qt := pydiffDistinct(pydiffTerms(q))
	h := int(sha256.Sum256([]byte(q))[0])
	var hs []rlsearch.Hit
	for row, dt := range r.c.terms {
		var s float64
		if r.name == rlsearch.RetrieverE5 {
			present := pydiffSet(dt)
			overlap := 0
			for _, t := range qt {
				if present[t] {
					overlap++
				}
			}
			s = float64(overlap)/4 + float64((h+29*row)%64)/1024
		} else {
			for _, t := range qt {
				tf := 0
				for _, x := range dt {
					if x == t {
						tf++
					}
				}
				if tf > 0 {
					w := 1.0
					if len(t) > 3 {
						w = 2
					}
					s += w * float64(8+min(tf, 8)) / 8
				}
			}
			if s == 0 {
				continue
			}
		}
		hs = append(hs, rlsearch.Hit{Row: int32(row), Score: float32(s)})
	}
	sort.SliceStable(hs, func(a, b int) bool { return hs[a].Score > hs[b].Score })
	return hs
}

// pydiffReranker is stub_sdk.rerank_score.
type pydiffReranker struct{}

func (pydiffReranker) Name() string { return "pydiff" }

func (pydiffReranker) Rerank(_ context.Context, q string, docs []rlsearch.Document) ([]float32, error) {
	qt := pydiffDistinct(pydiffTerms(q))
	out := make([]float32, len(docs))
	for i, d := range docs {
		tt, xt := pydiffSet(pydiffTerms(d.Title())), pydiffSet(pydiffTerms(d.Text()))
		s := float64(len(d.Contents)%5) / 8
		for _, t := range qt {
			if tt[t] {
				s += 2
			}
			if xt[t] {
				s++
			}
		}
		out[i] = float32(s)
	}
	return out, nil
}

// pydiffTokens counts ⌈UTF-8 bytes / 4⌉ per printed chunk (stub_sdk's
// emit), so that the observation cap binds the same way on both sides.
type pydiffTokens struct{}

func (pydiffTokens) CountTokens(s string) int { return (len(s) + 3) / 4 }

func pydiffRuntime(tb testing.TB) *Runtime {
	tb.Helper()
	c := loadPydiffDocs(tb)
	rt, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{
			rlsearch.RetrieverE5:   pydiffRetriever{rlsearch.RetrieverE5, c},
			rlsearch.RetrieverBM25: pydiffRetriever{rlsearch.RetrieverBM25, c},
		},
		Docs: c, Reranker: pydiffReranker{}, Tokens: pydiffTokens{},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

type pydiffProgram struct {
	name, category, src, question string
	hostile                       bool
	codes                         []ErrorCode // hostile: the accepted sandbox codes ("# sandbox: a|b")
}

func loadPydiffPrograms(tb testing.TB) []pydiffProgram {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(pydiffDir, "programs", "*.py"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no programs under %s/programs: %v", pydiffDir, err)
	}
	sort.Strings(paths)
	var out []pydiffProgram
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".py")
		cat, _, _ := strings.Cut(name, "_")
		pr := pydiffProgram{name: name, category: cat, src: string(raw), question: pydiffQuestion, hostile: cat == "hostile"}
		for _, line := range strings.Split(pr.src, "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			if q, ok := strings.CutPrefix(line, "# question: "); ok {
				pr.question = strings.TrimSpace(q)
			}
			if s, ok := strings.CutPrefix(line, "# sandbox: "); ok {
				for _, c := range strings.Split(strings.TrimSpace(s), "|") {
					pr.codes = append(pr.codes, ErrorCode(c))
				}
			}
		}
		if pr.hostile && len(pr.codes) == 0 {
			tb.Fatalf("%s: a hostile program needs a \"# sandbox: <code>\" header line", p)
		}
		out = append(out, pr)
	}
	return out
}

// loadDeliberate reads deliberate.txt: "name<TAB>reason" lines, # comments.
func loadDeliberate(tb testing.TB) map[string]string {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(pydiffDir, "deliberate.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			tb.Fatalf("deliberate.txt:%d: want \"program<TAB>reason\", got %q", i+1, line)
		}
		out[name] = strings.TrimSpace(reason)
	}
	return out
}

// pydiffCPython runs run_programs.py MODE ARGS... under CPython with
// PYTHONHASHSEED=0 and returns its output.
func pydiffCPython(tb testing.TB, mode string, args ...string) []byte {
	tb.Helper()
	if _, err := os.Stat(testutil.Python); err != nil {
		tb.Fatalf("%s is needed for %s: %v", testutil.Python, mode, err)
	}
	cmd := exec.Command(testutil.Python, append([]string{filepath.Join(pydiffDir, "run_programs.py"), mode}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", testutil.Python, mode, err, out)
	}
	return out
}

func pydiffRequests(progs []pydiffProgram) []Request {
	reqs := make([]Request, len(progs))
	for i, p := range progs {
		reqs[i] = Request{ID: p.name, Code: p.src, Question: p.question}
		if p.hostile {
			reqs[i].Budgets = &Budgets{Timeout: pydiffHostileTimeout}
		}
	}
	return reqs
}

// TestPythonDifferential runs every program of testdata/pydiff/programs
// through the sandbox and compares its observation byte for byte with its
// CPython golden; hostile programs must end with their pinned error code
// within their time budget; each deliberate difference must give its pinned
// sandbox output. It reports the share of byte-identical observations and
// enforces pydiffMinShare only under pydiffEnforce or RLSEARCH_PYDIFF_MIN.
//
//	go test ./sdk -run TestPythonDifferential -update          # goldens from CPython
//	go test ./sdk -run TestPythonDifferential -update-sandbox  # re-pin deliberate differences
//	RLSEARCH_PYDIFF_CPYTHON=1 go test ./sdk -run TestPythonDifferential  # goldens still match CPython?
func TestPythonDifferential(t *testing.T) {
	if transcript.Updating() {
		t.Logf("%s", pydiffCPython(t, "golden", filepath.Join(pydiffDir, "programs"), filepath.Join(pydiffDir, "golden")))
	} else if os.Getenv("RLSEARCH_PYDIFF_CPYTHON") != "" {
		t.Logf("%s", pydiffCPython(t, "check", filepath.Join(pydiffDir, "programs"), filepath.Join(pydiffDir, "golden")))
	}
	progs := loadPydiffPrograms(t)
	deliberate := loadDeliberate(t)
	names := map[string]bool{}
	for _, p := range progs {
		names[p.name] = true
	}
	for name := range deliberate {
		if !names[name] {
			t.Errorf("deliberate.txt names %s, which is not a program", name)
		}
	}
	if n := len(progs); n < 300 {
		t.Errorf("the suite has %d programs, the issue asks for at least 300", n)
	}

	rt := pydiffRuntime(t)
	start := time.Now()
	results := rt.RunBatch(context.Background(), pydiffRequests(progs), BatchOptions{})
	elapsed := time.Since(start)
	// Hostile programs run concurrently, each under pydiffHostileTimeout:
	// a deadline that does not hold shows here.
	if limit := 4*pydiffHostileTimeout + 10*time.Second; elapsed > limit {
		t.Errorf("the suite took %v, over %v: a hostile program's deadline did not hold", elapsed, limit)
	}

	type tally struct{ total, same, deliberate, hostile int }
	cats := map[string]*tally{}
	var all tally
	var diffs []string
	byCode := map[ErrorCode]int{} // differences by the sandbox's result code
	enforce := pydiffEnforce
	minShare := pydiffMinShare
	if s := os.Getenv("RLSEARCH_PYDIFF_MIN"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v > 1 || math.IsNaN(v) {
			t.Fatalf("RLSEARCH_PYDIFF_MIN=%q: want a share in [0, 1]", s)
		}
		enforce, minShare = true, v
	}
	for i, p := range progs {
		res := results[i]
		c := cats[p.category]
		if c == nil {
			c = &tally{}
			cats[p.category] = c
		}
		c.total++
		all.total++
		if p.hostile {
			// Always: a hostile program never completes. Its pinned code
			// is the front end's target: a different refusal is a
			// difference like any other.
			if res.Code == CodeOK || res.Code == CodeInternal {
				t.Errorf("hostile %s: code %s, want %v\n%s", p.name, res.Code, p.codes, pydiffHead(res.Observation))
			}
			if !slices.Contains(p.codes, res.Code) {
				diffs = append(diffs, fmt.Sprintf("%s: code %s (%s), pinned %v", p.name, res.Code, res.Error, p.codes))
				continue
			}
			c.same++
			c.hostile++
			all.same++
			all.hostile++
			continue
		}
		golden, err := os.ReadFile(filepath.Join(pydiffDir, "golden", p.name+".txt"))
		if err != nil {
			t.Errorf("%s: no golden (run with -update): %v", p.name, err)
			continue
		}
		if res.Observation == string(golden) {
			c.same++
			all.same++
			if _, ok := deliberate[p.name]; ok {
				t.Errorf("%s is listed in deliberate.txt but now matches CPython: remove it and its sandbox/%s.txt", p.name, p.name)
			}
			continue
		}
		if reason, ok := deliberate[p.name]; ok {
			c.deliberate++
			all.deliberate++
			pin := filepath.Join(pydiffDir, "sandbox", p.name+".txt")
			if *pydiffUpdateSandbox {
				if err := os.WriteFile(pin, []byte(res.Observation), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(pin)
			if err != nil {
				t.Errorf("deliberate difference %s (%s): no pinned sandbox output (run with -update-sandbox): %v", p.name, reason, err)
			} else if res.Observation != string(want) {
				t.Errorf("deliberate difference %s (%s) drifted:\nsandbox %q\npinned  %q", p.name, reason, res.Observation, want)
			}
			continue
		}
		byCode[res.Code]++
		diffs = append(diffs, fmt.Sprintf("%s:\n  sandbox %q\n  cpython %q", p.name, pydiffHead(res.Observation), pydiffHead(string(golden))))
	}
	share := float64(all.same) / float64(all.total)
	t.Logf("python differential: %d/%d byte-identical (%.1f%%; %d hostile programs ended with their pinned code, %d deliberate differences, %d other differences) in %v",
		all.same, all.total, 100*share, all.hostile, all.deliberate, len(diffs), elapsed.Round(time.Millisecond))
	keys := make([]string, 0, len(cats))
	for k := range cats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-12s %5s %5s %6s %10s\n", "category", "progs", "same", "share", "deliberate")
	for _, k := range keys {
		c := cats[k]
		fmt.Fprintf(&sb, "%-12s %5d %5d %5.0f%% %10d\n", k, c.total, c.same, 100*float64(c.same)/float64(c.total), c.deliberate)
	}
	t.Logf("per category:\n%s", sb.String())
	codes := make([]string, 0, len(byCode))
	for c, n := range byCode {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(codes)
	t.Logf("differences (non-hostile) by the sandbox's code (ok: runs but prints something else): %s", strings.Join(codes, ", "))
	if testing.Verbose() || enforce {
		for _, d := range diffs {
			t.Logf("differs: %s", d)
		}
	}
	if enforce {
		if share < minShare {
			t.Errorf("%.1f%% byte-identical, want ≥ %.0f%%", 100*share, 100*minShare)
		}
		if len(diffs) > 0 {
			t.Errorf("%d differences are not listed in deliberate.txt", len(diffs))
		}
	}
}

// TestPythonDifferentialStub checks that the Go stub retriever and
// reranker of the suite answer every query as stub_sdk.py does: the
// queries of the suite's programs (string literals given to sparse and
// dense) plus edge cases (empty, case, non-ASCII, punctuation). It needs
// CPython, so it runs with -update or RLSEARCH_PYDIFF_CPYTHON=1.
func TestPythonDifferentialStub(t *testing.T) {
	if !transcript.Updating() && os.Getenv("RLSEARCH_PYDIFF_CPYTHON") == "" {
		t.Skip("needs CPython: run with -update or RLSEARCH_PYDIFF_CPYTHON=1")
	}
	queries := []string{"", " ", "the", "a b c", "ROBIN hood", "Robin-Hood's 2018", "Björn Bengtsson", "İstanbul Kelvin K", "١٢ digits",
		"film film film", pydiffQuestion, strings.Repeat("american film ", 40)}
	lit := regexp.MustCompile(`(?:sparse|dense)\("([^"\\]*)"`)
	seen := map[string]bool{}
	for _, p := range loadPydiffPrograms(t) {
		queries = append(queries, p.question)
		for _, m := range lit.FindAllStringSubmatch(p.src, -1) {
			queries = append(queries, m[1])
		}
	}
	var uniq []string
	for _, q := range queries {
		if !seen[q] {
			seen[q] = true
			uniq = append(uniq, q)
		}
	}
	f := filepath.Join(t.TempDir(), "queries.json")
	raw, _ := json.Marshal(uniq)
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	const k = 50
	var want []map[string][][2]any
	out := pydiffCPython(t, "stub", f, strconv.Itoa(k))
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rt := pydiffRuntime(t)
	ctx := context.Background()
	asList := func(docs []Doc) [][2]any {
		l := make([][2]any, len(docs))
		for i, d := range docs {
			l[i] = [2]any{d.ID, d.Score}
		}
		return l
	}
	for i, q := range uniq {
		sp, err := rt.Search(ctx, RouteSparse, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		de, err := rt.Search(ctx, RouteDense, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := rt.Rerank(ctx, q, de, len(de))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][][2]any{"sparse": asList(sp), "dense": asList(de), "rerank": asList(rr)}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want[i])
		if string(gj) != string(wj) {
			t.Errorf("query %q:\ngo     %s\npython %s", q, pydiffHead(string(gj)), pydiffHead(string(wj)))
		}
	}
	t.Logf("%d queries: Go and Python stubs agree", len(uniq))
}

// pydiffHead is the first 300 bytes of an observation, for messages.
func pydiffHead(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// BenchmarkPythonDifferential runs the suite's programs through the sandbox
// and, with RLSEARCH_PYDIFF_CPYTHON=1, CPython exec() of the same programs
// with the reference SDK (run_programs.py time, one after another on one
// core), in the same run:
//
//	sandbox=batch        all programs, hostile ones included, as one RunBatch: programs/s
//	sandbox=batch-plain  the non-hostile programs as one RunBatch: programs/s
//	sandbox=one-by-one   the non-hostile programs with Run on one goroutine: µs/program
//	sandbox=identical    only those whose observation is byte-identical to CPython's
//	                     (like for like: the same work done): µs/program
//	cpython=exec         mean µs/program over the non-hostile programs, and
//	                     identical-µs/program over the same subset as sandbox=identical
//
// Both sides include their stub retriever's scoring (64 passages per call,
// Go against Python), so CPython's figures are an upper bound on its
// interpreter cost.
//
//	RLSEARCH_PYDIFF_CPYTHON=1 go test ./sdk -run XXX -bench PythonDifferential -benchtime 3x
func BenchmarkPythonDifferential(b *testing.B) {
	progs := loadPydiffPrograms(b)
	rt := pydiffRuntime(b)
	reqs := pydiffRequests(progs)
	ctx := context.Background()
	var plain, same []Request
	identical := map[string]bool{}
	for i, p := range progs {
		if p.hostile {
			continue
		}
		plain = append(plain, reqs[i])
		golden, err := os.ReadFile(filepath.Join(pydiffDir, "golden", p.name+".txt"))
		if err == nil && rt.Run(ctx, reqs[i], nil).Observation == string(golden) {
			same = append(same, reqs[i])
			identical[p.name] = true
		}
	}
	for _, set := range []struct {
		name string
		reqs []Request
	}{{"batch", reqs}, {"batch-plain", plain}} {
		b.Run("sandbox="+set.name, func(b *testing.B) {
			for b.Loop() {
				rt.RunBatch(ctx, set.reqs, BatchOptions{})
			}
			b.ReportMetric(float64(len(set.reqs)*b.N)/b.Elapsed().Seconds(), "programs/s")
		})
	}
	for _, set := range []struct {
		name string
		reqs []Request
	}{{"one-by-one", plain}, {"identical", same}} {
		b.Run("sandbox="+set.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				for _, r := range set.reqs {
					rt.Run(ctx, r, nil)
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/program")
			b.ReportMetric(float64(len(set.reqs)), "programs")
		})
	}
	b.Run("cpython=exec", func(b *testing.B) {
		if os.Getenv("RLSEARCH_PYDIFF_CPYTHON") == "" {
			b.Skip("set RLSEARCH_PYDIFF_CPYTHON=1 to time CPython exec() of the same programs")
		}
		var mean, sameMean float64
		done := false
		for b.Loop() {
			if done {
				continue
			}
			done = true
			var r struct {
				Mean float64            `json:"mean_us"`
				Per  map[string]float64 `json:"per_program_us"`
			}
			out := pydiffCPython(b, "time", filepath.Join(pydiffDir, "programs"), "20")
			if err := json.Unmarshal(out, &r); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			mean = r.Mean
			var sum float64
			for name := range identical {
				sum += r.Per[name]
			}
			if len(identical) > 0 {
				sameMean = sum / float64(len(identical))
			}
		}
		b.ReportMetric(mean, "µs/program")
		b.ReportMetric(sameMean, "identical-µs/program")
	})
}
