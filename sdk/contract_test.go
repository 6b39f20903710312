package sdk

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"go.starlark.net/starlark"
)

// aliasCorpus reports row `alias` under the id of row `target` (with its own
// contents): a corpus with an id collision, to exercise the conflict rule.
type aliasCorpus struct {
	ix            *index.Index
	alias, target int32
}

func (c aliasCorpus) Doc(row int32) (rlsearch.Document, error) {
	d, err := c.ix.Doc(row)
	if err != nil || row != c.alias {
		return d, err
	}
	t, err := c.ix.Doc(c.target)
	d.ID = t.ID
	return d, err
}

func sparseRows(t *testing.T, ix *index.Index, q string, k int) []int32 {
	t.Helper()
	hits, err := ix.Retrievers()["bm25"].Retrieve(context.Background(), []string{q}, k)
	if err != nil {
		t.Fatal(err)
	}
	var rows []int32
	for _, h := range hits[0] {
		rows = append(rows, h.Row)
	}
	return rows
}

func TestPrimitivesOnWiki(t *testing.T) {
	ix := wikiIndex(t)
	rt := newRT(t, ix, Config{Reranker: &lexReranker{}})
	ctx := context.Background()

	t.Run("sparse returns k documents with fields, sorted by score", func(t *testing.T) {
		docs, err := rt.Search(ctx, RouteSparse, "Robin Hood 2018 film director", 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 10 {
			t.Fatalf("got %d docs, want 10", len(docs))
		}
		for i, d := range docs {
			if d.ID == "" || d.Title() == "" || d.Text() == "" || !slices.Equal(d.Routes, []string{"sparse"}) {
				t.Fatalf("doc %d = %+v: want id, title, text and routes [sparse]", i, d)
			}
			if i > 0 && d.Score > docs[i-1].Score {
				t.Fatalf("scores not descending at %d: %v > %v", i, d.Score, docs[i-1].Score)
			}
		}
		if docs[0].ID != "wiki-000001" {
			t.Errorf("top doc %s %q, want wiki-000001 (Robin Hood (2018 film))", docs[0].ID, docs[0].Title())
		}
		res := run(t, rt, `
docs = sparse("Robin Hood 2018 film director", k=10)
for d in docs[:2]:
    print(d.id, d.title, d.routes, d.score > 0, len(d.text) > 0)
`)
		want := fmt.Sprintf("%s %s ('sparse',) True True\n%s %s ('sparse',) True True\n", docs[0].ID, docs[0].Title(), docs[1].ID, docs[1].Title())
		if res.Code != CodeOK || res.Observation != want {
			t.Fatalf("got %s %q, want ok %q", res.Code, res.Observation, want)
		}
	})

	t.Run("fuse is RRF with k=60 over ranks, routes united", func(t *testing.T) {
		a, _ := rt.Search(ctx, RouteSparse, "Robin Hood film", 20, nil)
		b, _ := rt.Search(ctx, RouteSparse, "Otto Bathurst director", 20, nil)
		f, err := Fuse([][]Doc{a, b}, 60)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		for _, l := range [][]Doc{a, b} {
			for r, d := range l {
				want[d.ID] += 1 / (60 + float64(r+1))
			}
		}
		if len(f) != len(want) {
			t.Fatalf("fused %d docs, want %d distinct", len(f), len(want))
		}
		for i, d := range f {
			if math.Abs(d.Score-want[d.ID]) > 1e-12 {
				t.Fatalf("%s: RRF score %v, want %v", d.ID, d.Score, want[d.ID])
			}
			if i > 0 && d.Score > f[i-1].Score {
				t.Fatalf("fused list not sorted at %d", i)
			}
		}
		// The same through a program, with the default and an explicit k.
		for _, src := range []string{
			`d = fuse([sparse("Robin Hood film", k=20), sparse("Otto Bathurst director", k=20)])`,
			`d = fuse(sparse("Robin Hood film", k=20), sparse("Otto Bathurst director", k=20), k=60)`,
		} {
			res := run(t, rt, src+"\nprint(d[:5])\n")
			if want := FormatObservation("", f[:5]); res.Observation != want {
				t.Fatalf("%s:\ngot  %q\nwant %q", src, res.Observation, want)
			}
		}
		// Another constant changes scores.
		res := run(t, rt, `print(fuse([sparse("Robin Hood film", k=20), sparse("Otto Bathurst director", k=20)], k=0)[0].score)`)
		f0, _ := Fuse([][]Doc{a, b}, 0)
		if want := starlark.Float(f0[0].Score).String() + "\n"; res.Code != CodeOK || res.Observation != want || f0[0].Score == f[0].Score {
			t.Fatalf("fuse k=0: %q (%s)", res.Observation, res.Code)
		}
		// Routes are united across routes.
		u, _ := Fuse([][]Doc{a, withRoute(a, "dense")}, 60)
		if !slices.Equal(u[0].Routes, []string{"dense", "sparse"}) {
			t.Fatalf("routes %v, want [dense sparse]", u[0].Routes)
		}
	})

	t.Run("exact duplicates are removed", func(t *testing.T) {
		res := run(t, rt, `
a = sparse("Robin Hood film", k=5)
b = dedup(a + a + sparse("Robin Hood film", k=3))
print(len(a + a), len(b), [d.id for d in b] == [d.id for d in a])
f = fuse([a, a + a])
print(len(f))
`)
		if res.Observation != "10 5 True\n5\n" {
			t.Fatalf("got %q (%s)", res.Observation, res.Error)
		}
	})

	rows := sparseRows(t, ix, "Robin Hood film", 10)
	conflictRT := newRT(t, ix, Config{Docs: aliasCorpus{ix, rows[3], rows[0]}, Reranker: &lexReranker{}})
	other := sparseRows(t, ix, "Otto Bathurst", 50)
	crossRT := newRT(t, ix, Config{Docs: aliasCorpus{ix, other[len(other)-1], rows[0]}})
	t.Run("same id with different contents is an error", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			rt   *Runtime
			src  string
		}{
			{"within a route's list", conflictRT, `print(sparse("Robin Hood film", k=10))`},
			{"across calls", crossRT, "a = sparse(\"Robin Hood film\", k=10)\nb = sparse(\"Otto Bathurst\", k=50)\nprint(a[:1])"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := run(t, tc.rt, tc.src)
				if res.Code != CodeConflict || !strings.Contains(res.Observation, "different contents") {
					t.Fatalf("got %s %q, want document_conflict", res.Code, res.Observation)
				}
			})
		}
		a, _ := rt.Search(ctx, RouteSparse, "Robin Hood film", 5, nil)
		bad := slices.Clone(a)
		bad[2].Contents += " (edited)"
		if _, err := Fuse([][]Doc{a, bad}, 60); codeOf(err) != CodeConflict {
			t.Fatalf("Fuse across lists: %v, want conflict", err)
		}
		if _, err := Dedup(append(slices.Clone(a), bad[2])); codeOf(err) != CodeConflict {
			t.Fatalf("Dedup within a list: %v, want conflict", err)
		}
		if _, err := rt.Rerank(ctx, "q", append(slices.Clone(a), bad[2]), 3); codeOf(err) != CodeConflict {
			t.Fatalf("Rerank: %v, want conflict", err)
		}
	})

	t.Run("rerank only reorders and cuts", func(t *testing.T) {
		in, _ := rt.Search(ctx, RouteSparse, "American film director", 20, nil)
		out, err := rt.Rerank(ctx, "Robin Hood 2018 film", in, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 5 {
			t.Fatalf("kept %d, want 5", len(out))
		}
		for _, d := range out {
			if !slices.ContainsFunc(in, func(x Doc) bool { return x.ID == d.ID && x.Contents == d.Contents }) {
				t.Fatalf("rerank returned %s, not among its inputs", d.ID)
			}
		}
		all, _ := rt.Rerank(ctx, "Robin Hood 2018 film", in, 100)
		if len(all) != len(in) {
			t.Fatalf("k > len kept %d of %d", len(all), len(in))
		}
		res := run(t, rt, `
c = sparse("American film director", k=20)
r = rerank("Robin Hood 2018 film", c, k=5)
ids = [d.id for d in c]
print(len([d for d in r if d.id in ids]), len(r))
print(r)
`)
		if res.Code != CodeOK || !strings.HasPrefix(res.Observation, "5 5\n") || res.Observation[len("5 5\n"):] != FormatObservation("", out) {
			t.Fatalf("got %s %q", res.Code, res.Observation)
		}
	})

	t.Run("rerank without a reranker fails clearly", func(t *testing.T) {
		plain := newRT(t, ix, Config{})
		res := run(t, plain, "print(\"before\")\nprint(rerank(\"q\", sparse(\"Robin Hood\", k=5), k=3))")
		if res.Code != CodeUnavailable || res.Observation != "before\nError (unavailable): line 2: rerank: no reranker is configured on this server\n" {
			t.Fatalf("got %s %q", res.Code, res.Observation)
		}
	})

	t.Run("dense without a model is unavailable", func(t *testing.T) {
		res := run(t, rt, `print(dense("Robin Hood", k=5))`)
		if res.Code != CodeUnavailable || !strings.Contains(res.Observation, "dense retrieval is not available") {
			t.Fatalf("got %s %q", res.Code, res.Observation)
		}
	})

	t.Run("budgets", func(t *testing.T) {
		small := newRT(t, ix, Config{Budgets: Budgets{MaxCalls: 2, MaxCandidates: 30, MaxObservationTokens: 60, MaxSteps: 5000}})
		for _, tc := range []struct {
			name, src, want string
			rt              *Runtime
			code            ErrorCode
		}{
			{"width over the cap", `sparse("Robin Hood", k=51)`, "width k = 51 exceeds the cap of 50", rt, CodeBudget},
			{"width 10^9", `sparse("Robin Hood", k=1000000000)`, "width k = 1000000000 exceeds the cap of 50", rt, CodeBudget},
			{"width 0", `sparse("Robin Hood", k=0)`, "k = 0 must be ≥ 1", rt, CodeRuntime},
			{"21 printed documents", `print(fuse([sparse("Robin Hood", k=20), sparse("film director", k=20)])[:21])`, "printed-document budget exceeded: 21 documents printed, the cap is 20", rt, CodeBudget},
			{"printed documents add up", "d = sparse(\"Robin Hood\", k=15)\nprint(d)\nprint(d[:6])", "the cap is 20", rt, CodeBudget},
			{"calls", "for q in [\"a b\", \"Robin\", \"Hood\"]:\n    sparse(q, k=3)", "call budget exceeded: 3 retrieval calls, the cap is 2", small, CodeBudget},
			{"candidates", "sparse(\"Robin Hood\", k=20)\nsparse(\"film\", k=20)", "candidate budget exceeded: 40 documents retrieved, the cap is 30", small, CodeBudget},
			{"observation tokens", `print(sparse("Robin Hood", k=5))`, "observation budget exceeded", small, CodeBudget},
			{"steps", "x = 0\nwhile True:\n    x += 1", "step budget of 5000 steps exceeded", small, CodeBudget},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := run(t, tc.rt, tc.src)
				if res.Code != tc.code || !strings.Contains(res.Observation, tc.want) {
					t.Fatalf("got %s %q, want %s containing %q", res.Code, res.Observation, tc.code, tc.want)
				}
			})
		}
		// A request lowers budgets but cannot raise them.
		res := rt.Run(ctx, Request{Code: `sparse("Robin Hood", k=20)`, Budgets: &Budgets{MaxWidth: 10}}, nil)
		if res.Code != CodeBudget {
			t.Fatalf("request MaxWidth 10: got %s", res.Code)
		}
		res = small.Run(ctx, Request{Code: "for q in [\"a\", \"b\", \"c\"]:\n    sparse(q, k=3)", Budgets: &Budgets{MaxCalls: 100}}, nil)
		if res.Code != CodeBudget {
			t.Fatalf("request MaxCalls 100 over runtime cap 2: got %s", res.Code)
		}
	})

	t.Run("only printed evidence is observed", func(t *testing.T) {
		res := run(t, rt, "docs = sparse(question, k=50)\nbest = rerank(question, docs, k=3)\n")
		if res.Code != CodeOK || res.Observation != "" || len(res.PrintedIDs) != 0 || res.Stats.Candidates != 50 {
			t.Fatalf("got %+v", res)
		}
	})

	t.Run("doc(id) returns retrieved documents only", func(t *testing.T) {
		res := run(t, rt, "d = sparse(\"Robin Hood 2018 film\", k=3)\nprint(doc(d[0].id))\nprint(doc(\"wiki-000002\"))")
		if res.Code != CodeUnknownDoc || len(res.PrintedIDs) != 1 || !strings.Contains(res.Observation, `line 3: doc: "wiki-000002" was not retrieved by this program`) {
			t.Fatalf("got %s %q %v", res.Code, res.Observation, res.PrintedIDs)
		}
	})
}

func withRoute(docs []Doc, r string) []Doc {
	out := slices.Clone(docs)
	for i := range out {
		out[i].Routes = []string{r}
	}
	return out
}

func TestErrorObservations(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	for _, tc := range []struct {
		name, src string
		code      ErrorCode
		want      string
	}{
		{"syntax", "print(\"a\"", CodeSyntax, "Error (syntax_error): line 1:"},
		{"import", "import os\nprint(1)", CodeUnsupported, "line 1: module \"os\" is not available (programs cannot reach files, the network or the process); the allowed modules are math, re, collections"},
		{"class", "class A:\n    pass", CodeUnsupported, "line 1: `class` definitions are not supported; use a dict"},
		{"try", "try:\n    x = 1 // 0\nexcept ZeroDivisionError as e:\n    print(e)", CodeOK, "integer division or modulo by zero\n"},
		{"open", "open(\"/etc/passwd\")", CodeUnsupported, "open() is not available: programs cannot read or write files"},
		{"load", "load(\"x.star\", \"y\")", CodeUnsupported, "load() is not available"},
		{"f-string", "x = 1\nprint(f\"{x:.2f}\")", CodeOK, "1.00\n"},
		{"recursion", "def f(n):\n    return f(n - 1) if n else 0\nprint(f(10))", CodeOK, "0\n"},
		{"deep recursion", "def f(n):\n    return f(n - 1) if n else 0\nprint(f(5000))", CodeBudget, "recursion budget exceeded"},
		{"division by zero", "print(\"a\")\nx = 1 // 0", CodeRuntime, "a\nError (runtime_error): line 2: ZeroDivisionError: integer division or modulo by zero\n"},
		{"index", "d = sparse(\"zzqqxx nothing\", k=3)\nprint(d[5])", CodeRuntime, "line 2: IndexError: list index out of range"},
		{"bad argument", "sparse(3)", CodeRuntime, "sparse: query must be a string, got int"},
		{"fuse of non-documents", "fuse([1, 2])", CodeRuntime, "fuse: list 1[0] must be a document, got int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, rt, tc.src)
			if res.Code != tc.code || !strings.Contains(res.Observation, tc.want) {
				t.Fatalf("got %s %q, want %s containing %q", res.Code, res.Observation, tc.code, tc.want)
			}
		})
	}
}

func TestDeterministicObservation(t *testing.T) {
	ix := wikiIndex(t)
	src := `
def round_score(d):
    return int(d.score * 1000000)
docs = fuse([sparse(q, k=20) for q in ["Robin Hood film", "Otto Bathurst", question]])
seen = {}
for d in sorted(docs, key=lambda d: d.title):
    seen[d.title[:1]] = seen.get(d.title[:1], 0) + 1
print(sorted(seen.items())[:5], set([d.routes for d in docs]))
print(docs[:4])
print("%s" % docs[0].score, round_score(docs[0]))
`
	a := run(t, newRT(t, ix, Config{}), src)
	for i := 0; i < 3; i++ {
		b := run(t, newRT(t, ix, Config{}), src)
		if b.Observation != a.Observation || !slices.Equal(a.PrintedIDs, b.PrintedIDs) || a.Code != CodeOK {
			t.Fatalf("run %d differs or failed:\n%q\n%q", i, a.Observation, b.Observation)
		}
	}
}
