package sdk

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// Questions of ../shared/data/wiki_multihop/questions.jsonl behind the
// paper's controls, chosen by running the width-3 BM25 program of each
// question's text over the BM25 index of the shared corpus:
const (
	// The width-3 program prints 1 of the 2 gold passages; the nearest
	// mutation, width 5, prints both. Gold answer "YG Entertainment".
	qWidth5 = "hotpotqa-5abd94525542992ac4f382d2"
	// The width-3 program prints 1 of 2; width 5 still misses, width 10
	// prints both (the second execution).
	qWidth10 = "hotpotqa-5a87ab905542996e4f3088c1"
	// A width-20 program printing 3: the 20 candidates hold both gold
	// passages, the 3 printed hold none.
	qPrints3 = "hotpotqa-5a8e068b5542995085b37384"
	// No sparse width on the ladder prints both gold passages.
	qNever = "hotpotqa-5ae3ec265542995dadf24252"
)

var (
	wikiQOnce sync.Once
	wikiQ     map[string]bench.Question
	wikiQList []bench.Question
	wikiQErr  error
)

func wikiQuestion(tb testing.TB, id string) bench.Question {
	tb.Helper()
	wikiQuestions(tb)
	q, ok := wikiQ[id]
	if !ok {
		tb.Fatalf("question %s not in the shared question set", id)
	}
	return q
}

func wikiQuestions(tb testing.TB) []bench.Question {
	tb.Helper()
	data := testutil.DataDir(tb)
	wikiQOnce.Do(func() {
		wikiQList, wikiQErr = bench.LoadQuestions(filepath.Join(data, "wiki_multihop", "questions.jsonl"))
		wikiQ = map[string]bench.Question{}
		for _, q := range wikiQList {
			wikiQ[q.ID] = q
		}
	})
	if wikiQErr != nil {
		tb.Fatal(wikiQErr)
	}
	return wikiQList
}

func bm25Program(q bench.Question, width, print int) Program {
	return Program{Queries: []string{q.Question}, Mode: ModeSparse, Width: width, Print: print}
}

func newVerifier(tb testing.TB, rt *Runtime, cfg MutateConfig) *Verifier {
	tb.Helper()
	v, err := NewVerifier(rt, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// TestControlsOnWiki reproduces the paper's controls (RPL Section 3,
// Appendix B) on the shared wiki_multihop data with BM25.
func TestControlsOnWiki(t *testing.T) {
	ix := wikiIndex(t)
	rt := newRT(t, ix, Config{})
	ctx := context.Background()

	t.Run("width-3 misses a gold passage, the verified width-5 mutation prints it", func(t *testing.T) {
		q := wikiQuestion(t, qWidth5)
		v := newVerifier(t, rt, MutateConfig{})
		res, err := v.Search(ctx, bm25Program(q, 3, 3), nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Original.Verified || res.Original.GoldCovered != 1 {
			t.Fatalf("original (negative control) covers %d of %v, verified %v; want 1, unverified", res.Original.GoldCovered, q.GoldIDs, res.Original.Verified)
		}
		if res.Status != StatusVerified || len(res.Verified) != 1 || res.Executions != 1 {
			t.Fatalf("status %s, %d verified after %d executions; want one at the first", res.Status, len(res.Verified), res.Executions)
		}
		m := res.Verified[0]
		if m.Program.Width != 5 || m.Program.Print != 5 || m.Distance != (Distance{Width: 1}) {
			t.Fatalf("verified %+v at %v, want width 5 one ladder step away", m.Program, m.Distance)
		}
		missing := slices.DeleteFunc(slices.Clone(q.GoldIDs), func(id string) bool { return slices.Contains(res.Original.PrintedIDs, id) })
		for _, id := range missing {
			if !slices.Contains(m.PrintedIDs, id) {
				t.Errorf("gold %s missed by width 3 is not printed by the mutation %v", id, m.PrintedIDs)
			}
		}
		// The verified evidence is what the program prints when run as
		// source in the sandbox.
		run := rt.RunProgram(ctx, m.Program, q.Question, nil)
		if run.Code != CodeOK || run.Observation != m.Observation || !slices.Equal(run.PrintedIDs, m.PrintedIDs) || run.Observation == "" {
			t.Fatalf("running the mutation's source gives %s %v, the verifier saw %v", run.Code, run.PrintedIDs, m.PrintedIDs)
		}
		if res.Searches != 1 {
			t.Errorf("%d searches for one (route, query), want 1", res.Searches)
		}
	})

	t.Run("width 5 still misses, width 10 verifies at the second execution", func(t *testing.T) {
		q := wikiQuestion(t, qWidth10)
		v := newVerifier(t, rt, MutateConfig{})
		res, err := v.Search(ctx, bm25Program(q, 3, 3), nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Original.Verified || res.Status != StatusVerified || res.Verified[0].Program.Width != 10 || res.Verified[0].Execution != 2 || res.Executions != 2 {
			t.Fatalf("got %+v", res)
		}
	})

	t.Run("retrieves 20 candidates but prints 3", func(t *testing.T) {
		q := wikiQuestion(t, qPrints3)
		p := bm25Program(q, 20, 3)
		docs, err := rt.Search(ctx, RouteSparse, q.Question, 20, nil)
		if err != nil {
			t.Fatal(err)
		}
		var retrieved []string
		for _, d := range docs {
			retrieved = append(retrieved, d.ID)
		}
		if covered(retrieved, q.GoldIDs) != len(q.GoldIDs) {
			t.Fatalf("the 20 candidates should hold all gold %v", q.GoldIDs)
		}
		v := newVerifier(t, rt, MutateConfig{Executions: 1})
		res, err := v.Search(ctx, p, nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Original.PrintedIDs) != 3 || res.Original.GoldCovered != 0 || res.Original.Verified {
			t.Fatalf("program printing 3 of 20: printed %v, covers %d, verified %v; V_ret must judge printed evidence only",
				res.Original.PrintedIDs, res.Original.GoldCovered, res.Original.Verified)
		}
		// The nearest mutation, width 10 (one ladder step, fewer
		// candidates than 50), prints 10 and verifies.
		if res.Status != StatusVerified || res.Verified[0].Program.Width != 10 {
			t.Fatalf("got %s %+v", res.Status, res.Verified)
		}
	})

	t.Run("a budget that runs out returns no solution", func(t *testing.T) {
		q := wikiQuestion(t, qWidth10)
		v := newVerifier(t, rt, MutateConfig{Executions: 1})
		res, err := v.Search(ctx, bm25Program(q, 3, 3), nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusNone || len(res.Verified) != 0 || res.Executions != 1 {
			t.Fatalf("budget 1: status %s, %d verified, %d executions; want no_verified_mutation after 1", res.Status, len(res.Verified), res.Executions)
		}
		q = wikiQuestion(t, qNever)
		v = newVerifier(t, rt, MutateConfig{})
		res, err = v.Search(ctx, bm25Program(q, 3, 3), nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusNone || res.Executions != res.SpaceSize || res.SpaceSize != 4 {
			t.Fatalf("exhausted space: status %s after %d executions of |U(p)| = %d", res.Status, res.Executions, res.SpaceSize)
		}
	})

	t.Run("at least m gold", func(t *testing.T) {
		q := wikiQuestion(t, qWidth5)
		v := newVerifier(t, rt, MutateConfig{MinGold: 1})
		res, err := v.Search(ctx, bm25Program(q, 3, 3), nil, Gold{IDs: q.GoldIDs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Original.Verified || res.NeedGold != 1 {
			t.Fatalf("with min_gold 1 the original (1 of 2 printed) passes: %+v", res.Original)
		}
	})
}

// TestCachedEqualsUncached: on seeded random programs, pools and gold,
// verification through the shared primitive cache gives exactly the
// result of executing every mutation with its own retrieval calls, with
// no more searches (and one per distinct (route, query)).
func TestCachedEqualsUncached(t *testing.T) {
	t.Run("sparse+rerank/wiki", func(t *testing.T) {
		rt := newRT(t, wikiIndex(t), Config{Reranker: &lexReranker{}})
		checkCachedUncached(t, rt, []Mode{ModeSparse}, 12, 3, 48)
	})
	t.Run("dense+sparse+fuse+rerank/tiny-model", func(t *testing.T) {
		rt := newRT(t, denseIndex(t), Config{Reranker: &lexReranker{}})
		checkCachedUncached(t, rt, []Mode{ModeDense, ModeSparse, ModeFuse}, 4, 11, 24)
	})
}

func checkCachedUncached(t *testing.T, rt *Runtime, modes []Mode, n int, seed uint64, budget int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 5))
	cached := newVerifier(t, rt, MutateConfig{Executions: budget, MaxVerified: 3, Space: Space{Modes: modes}})
	uncached := newVerifier(t, rt, MutateConfig{Executions: budget, MaxVerified: 3, Space: Space{Modes: modes}, NoCache: true})
	verified := 0
	for i := range n {
		p, pool := mutRandomProgram(rng, modes, true, 3)
		// Gold: one document printed by a random member of U(p) and one
		// printed by p itself, so that some searches verify.
		muts, err := Mutations(p, pool, cached.Space())
		if err != nil {
			t.Fatal(err)
		}
		var gold []string
		for _, q := range []Program{p, muts[rng.IntN(min(len(muts), budget))].Program} {
			docs, _, _, err := rt.Evaluate(ctx, q, nil)
			if err == nil && len(docs) > 0 {
				gold = append(gold, docs[rng.IntN(len(docs))].ID)
			}
		}
		if len(gold) == 0 {
			gold = []string{"no-such-document"}
		}
		a, err := cached.Search(ctx, p, pool, Gold{IDs: gold}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := uncached.Search(ctx, p, pool, Gold{IDs: gold}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.Searches > b.Searches {
			t.Errorf("program %d: cached searches %d > uncached %d", i, a.Searches, b.Searches)
		}
		distinctCalls := map[call]bool{}
		for _, q := range append(programsOf(muts[:a.Executions]), p) {
			for _, c := range q.calls() {
				distinctCalls[call{c.route, c.query, 0}] = true
			}
		}
		if a.Searches > len(distinctCalls) {
			t.Errorf("program %d: %d cached searches for %d distinct (route, query)", i, a.Searches, len(distinctCalls))
		}
		a.Searches, b.Searches = 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("program %d %+v pool %q: cached and uncached verification differ\ncached   %+v\nuncached %+v", i, p, pool, a, b)
		}
		verified += len(a.Verified)
	}
	t.Logf("%d programs, %d verified mutations", n, verified)
	if verified == 0 {
		t.Error("no verification happened: the comparison is vacuous")
	}
}

func TestVerifierConfig(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	tests := []struct {
		name string
		cfg  MutateConfig
		want string
	}{
		{"executions over 256", MutateConfig{Executions: 257}, "Executions"},
		{"negative executions", MutateConfig{Executions: -1}, "Executions"},
		{"negative min gold", MutateConfig{MinGold: -1}, "MinGold"},
		{"template without placeholder", MutateConfig{ObservationTemplate: "<x>"}, "ObservationTemplate"},
		{"bad width", MutateConfig{Space: Space{Widths: []int{7}}}, "Space.Widths"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewVerifier(rt, tc.cfg)
			if !errors.Is(err, ErrBadArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrBadArgument naming %s", err, tc.want)
			}
		})
	}
	// A BM25-only runtime without a reranker restricts the space to what
	// it can execute.
	v := newVerifier(t, rt, MutateConfig{})
	if s := v.Space(); !slices.Equal(s.Modes, []Mode{ModeSparse}) || !slices.Equal(s.RerankWidths, []int{0}) {
		t.Errorf("space %+v, want sparse only and no reranking", s)
	}
	if v.Config().Executions != DefaultExecutions {
		t.Errorf("default budget %d, want 64", v.Config().Executions)
	}
	if _, err := v.Search(context.Background(), Program{Queries: []string{"x"}, Mode: ModeSparse, Width: 3, Print: 3}, nil, Gold{}, nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("no gold: err = %v, want ErrBadArgument", err)
	}
	res, err := v.Search(context.Background(), Program{Queries: []string{"x"}, Mode: ModeSparse, Width: 4, Print: 3}, nil, Gold{IDs: []string{"a"}}, nil)
	if err != nil || res.Status != StatusNotMutable || res.Reason == "" {
		t.Errorf("invalid program: %v %s %q, want not_mutable with a reason", err, res.Status, res.Reason)
	}
}
