package sdk

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func allPrograms(queries []string) []Program {
	var out []Program
	for n := 1; n <= len(queries); n++ {
		for _, m := range []Mode{ModeDense, ModeSparse, ModeFuse} {
			for _, w := range Widths {
				for _, r := range RerankWidths {
					for _, pr := range []int{1, 3, 20} {
						p := Program{Queries: queries[:n], Mode: m, Width: w, Rerank: r, Print: pr}
						if p.Validate() == nil {
							out = append(out, p)
						}
					}
				}
			}
		}
	}
	return out
}

func TestTypedRoundTrip(t *testing.T) {
	progs := allPrograms([]string{"who directed \"Robin Hood\"?", "Otto Bathurst\nfilms", "q3 \\ é", "four"})
	if len(progs) < 500 {
		t.Fatalf("only %d valid programs enumerated", len(progs))
	}
	for _, p := range progs {
		src := p.Source()
		got, err := Recognize(src)
		if err != nil {
			t.Fatalf("Recognize(%+v.Source()): %v\n%s", p, err, src)
		}
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("round trip: got %+v, want %+v\n%s", got, p, src)
		}
	}
}

func TestRecognizeVariants(t *testing.T) {
	want := Program{Queries: []string{"b", "a"}, Mode: ModeFuse, Width: 20, Rerank: 5, Print: 3}
	for _, src := range []string{
		want.Source(),
		"# written by the policy\nd1 = dense(\"a\", k=20)\ns1 = sparse(\"a\", 20)\nd2 = dense(\"b\", k=20)\ns2 = sparse(\"b\", k=20)\nall_docs = fuse(d1, s1, d2, s2)\ntop = rerank(\"b\", all_docs, k=5)\nprint(top[:3])\n",
		"docs = fuse([sparse(\"b\", k=20), dense(\"b\", k=20), sparse(\"a\", k=20), dense(\"a\", k=20)], k=60)\nprint(rerank(\"b\", docs, 5)[:3])\n",
	} {
		got, err := Recognize(src)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		if got.Mode != want.Mode || got.Width != want.Width || got.Rerank != want.Rerank || got.Print != want.Print || got.Queries[0] != "b" || len(got.Queries) != 2 {
			t.Fatalf("got %+v, want %+v\n%s", got, want, src)
		}
	}
	got, err := Recognize("docs = sparse(\"x\", k=5)\nprint(docs)\n")
	if err != nil || !reflect.DeepEqual(got, Program{Queries: []string{"x"}, Mode: ModeSparse, Width: 5, Print: 5}) {
		t.Fatalf("unsliced single call: %+v %v", got, err)
	}
	for _, tc := range []struct{ name, src, reason string }{
		{"unfused calls", "a = sparse(\"x\", k=5)\nb = sparse(\"y\", k=5)\nprint(a[:3])\nprint(b[:3])", "statement after print"},
		{"duplicate call", "print(fuse([sparse(\"x\", k=5), sparse(\"x\", k=5)])[:3])", "duplicate call"},
		{"mixed widths", "print(fuse([sparse(\"x\", k=5), dense(\"x\", k=10)])[:3])", "different widths"},
		{"mixed modes", "print(fuse([sparse(\"x\", k=5), dense(\"y\", k=5)])[:3])", "different modes"},
		{"width off ladder", "print(sparse(\"x\", k=7)[:3])", "not on the ladder"},
		{"rerank off ladder", "print(rerank(\"x\", sparse(\"x\", k=10), k=4))", "not on the ladder"},
		{"rerank query outside the pool", "print(rerank(\"z\", sparse(\"x\", k=10), k=5))", "rerank query"},
		{"five queries", "print(fuse([sparse(q, k=5) for q in [\"a\", \"b\", \"c\", \"d\", \"e\"]])[:3])", "not in the typed subset"},
		{"five literal queries", "print(fuse([sparse(\"a\", k=3), sparse(\"b\", k=3), sparse(\"c\", k=3), sparse(\"d\", k=3), sparse(\"e\", k=3)])[:3])", "5 queries"},
		{"loop", "for q in [\"a\"]:\n    print(sparse(q, k=5))", "not in the typed subset"},
		{"query variable", "q = \"a\"\nprint(sparse(q, k=5))", "Literal is not in the typed subset"},
		{"rrf k", "print(fuse([sparse(\"x\", k=5), dense(\"x\", k=5)], k=10)[:3])", "RRF k"},
		{"too many printed", "print(fuse([sparse(\"x\", k=20), dense(\"x\", k=20)])[:21])", "Program.Print 21"},
		{"no print", "d = sparse(\"x\", k=5)", "prints nothing"},
		{"fused without slice", "print(fuse([sparse(\"x\", k=5), dense(\"x\", k=5)]))", "slice"},
		{"syntax", "print(", "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Recognize(tc.src)
			if !errors.Is(err, ErrNotTyped) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("got %v, want ErrNotTyped with %q", err, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "sdk: not in the typed subset: ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
		})
	}
}

func TestProgramValidate(t *testing.T) {
	ok := Program{Queries: []string{"a"}, Mode: ModeSparse, Width: 10, Print: 3}
	for _, tc := range []struct {
		name   string
		edit   func(*Program)
		reason string
	}{
		{"valid", func(*Program) {}, ""},
		{"no queries", func(p *Program) { p.Queries = nil }, "Program.Queries has 0"},
		{"five queries", func(p *Program) { p.Queries = []string{"a", "b", "c", "d", "e"} }, "Program.Queries has 5"},
		{"duplicate queries", func(p *Program) { p.Queries = []string{"a", "a"} }, "duplicate calls"},
		{"blank query", func(p *Program) { p.Queries = []string{" "} }, "blank"},
		{"mode", func(p *Program) { p.Mode = 0 }, "Program.Mode"},
		{"width", func(p *Program) { p.Width = 4 }, "Program.Width 4"},
		{"rerank", func(p *Program) { p.Rerank = 7 }, "Program.Rerank 7"},
		{"rerank over candidates", func(p *Program) { p.Width = 3; p.Rerank = 5 }, "keeps more documents"},
		{"print 0", func(p *Program) { p.Print = 0 }, "Program.Print 0"},
		{"print over rerank", func(p *Program) { p.Rerank = 3; p.Print = 5 }, "Program.Print 5"},
		{"print over width", func(p *Program) { p.Width = 3; p.Print = 5 }, "Program.Print 5"},
		{"print 21", func(p *Program) { p.Mode = ModeFuse; p.Width = 50; p.Print = 21 }, "Program.Print 21"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			p.Queries = slices.Clone(ok.Queries)
			tc.edit(&p)
			err := p.Validate()
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotTyped) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("got %v, want %q", err, tc.reason)
			}
		})
	}
}

// randomProgram draws a valid typed program from pool with rng.
func randomProgram(rng *rand.Rand, pool []string, modes []Mode) Program {
	for {
		n := 1 + rng.IntN(min(MaxQueries, len(pool)))
		perm := rng.Perm(len(pool))[:n]
		qs := make([]string, n)
		for i, j := range perm {
			qs[i] = pool[j]
		}
		p := Program{
			Queries: qs,
			Mode:    modes[rng.IntN(len(modes))],
			Width:   Widths[rng.IntN(len(Widths))],
			Rerank:  RerankWidths[rng.IntN(len(RerankWidths))],
			Print:   1 + rng.IntN(MaxPrint),
		}
		if p.Validate() == nil {
			return p
		}
	}
}

// questionPool returns query strings from the shared question set.
func questionPool(tb testing.TB) []string {
	return []string{
		"Who directed the 2018 film Robin Hood?",
		"Otto Bathurst",
		"Which country is the director of Robin Hood of the Range from?",
		"American Western film 1943 Columbia Pictures",
		"Lionsgate Summit Entertainment",
		"William Berke",
		"silent film director screenwriter",
		"Joaquin Murrieta folk hero",
		"When was the director of The Robin Hood of El Dorado born?",
		"zzqx unmatched query",
	}
}

// checkMetamorphic runs seeded random typed programs (a) through the
// Starlark runtime from canonical source and (b) by the plain-Go
// evaluation of the typed form, and compares printed evidence and the
// observation byte for byte.
func checkMetamorphic(t *testing.T, rt *Runtime, modes []Mode, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	pool := questionPool(t)
	ctx := context.Background()
	budgetHits := 0
	defer func() { t.Logf("%d programs, %d over the observation cap in both", n, budgetHits) }()
	for i := 0; i < n; i++ {
		p := randomProgram(rng, pool, modes)
		docs, obs, st, err := rt.Evaluate(ctx, p, nil)
		res := rt.RunProgram(ctx, p, "", nil)
		if err != nil {
			if codeOf(err) != CodeBudget || res.Code != CodeBudget || len(res.PrintedIDs) != 0 || res.Error != "line "+strconv.Itoa(strings.Count(p.Source(), "\n"))+": "+err.Error() {
				t.Fatalf("Evaluate(%+v): %v; runtime %s %q", p, err, res.Code, res.Error)
			}
			budgetHits++
			continue
		}
		if res.Code != CodeOK {
			t.Fatalf("RunProgram(%+v): %s %s\n%s", p, res.Code, res.Error, p.Source())
		}
		ids := make([]string, len(docs))
		for j, d := range docs {
			ids[j] = d.ID
		}
		if !slices.Equal(res.PrintedIDs, ids) {
			t.Fatalf("program %d %+v: printed %v, Go evaluation %v\n%s", i, p, res.PrintedIDs, ids, p.Source())
		}
		if res.Observation != obs {
			t.Fatalf("program %d %+v: observations differ\nruntime %q\ngo      %q", i, p, res.Observation, obs)
		}
		if res.Stats.RetrievalCalls != st.RetrievalCalls || res.Stats.Candidates != st.Candidates || res.Stats.Reranks != st.Reranks || res.Stats.PrintedTokens != st.PrintedTokens {
			t.Fatalf("program %d: stats %+v, Go evaluation %+v", i, res.Stats, st)
		}
	}
}

func TestMetamorphicSparse(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Reranker: &lexReranker{}})
	checkMetamorphic(t, rt, []Mode{ModeSparse}, 300, 42)
}

func TestMetamorphicDense(t *testing.T) {
	rt := newRT(t, denseIndex(t), Config{Reranker: &lexReranker{}})
	checkMetamorphic(t, rt, []Mode{ModeDense, ModeSparse, ModeFuse}, 150, 7)
}
