package sdk

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/bench"
)

const testPrompt = "Réponds à la question — answer the question. Question: "

// rollout builds a one-retrieval rollout of q: a prompt, a model turn with
// the program p in a <code> block, the observation the runtime printed for
// it in an <information> block, and a final answer.
func rollout(t *testing.T, rt *Runtime, q bench.Question, p Program, answer string) Trajectory {
	t.Helper()
	res := rt.RunProgram(context.Background(), p, q.Question, nil)
	if res.Code != CodeOK {
		t.Fatalf("original program: %s %s", res.Code, res.Error)
	}
	return Trajectory{
		ID: q.ID, Question: q.Question, GoldenAnswers: q.GoldAnswers, GoldPassageIDs: q.GoldIDs,
		Turns: []Turn{
			{Role: "user", Text: testPrompt + q.Question + "\n"},
			{Role: "assistant", Text: "<think>Search the question first.</think>\n<code>\n" + p.Source() + "</code>"},
			{Role: "tool", Text: "\n<information>\n" + res.Observation + "</information>\n"},
			{Role: "assistant", Text: "<answer>" + answer + "</answer>"},
		},
	}
}

// wikiRollout is the fixture of TestProposeOnWiki and TestBuildRecord: a
// verifier over the wiki index, question qWidth5, its BM25 program and a
// rollout of that program answering "SM Entertainment".
func wikiRollout(t *testing.T) (*Runtime, *Verifier, bench.Question, Program, Trajectory) {
	t.Helper()
	rt := newRT(t, wikiIndex(t), Config{})
	v := newVerifier(t, rt, MutateConfig{})
	q := wikiQuestion(t, qWidth5)
	p := bm25Program(q, 3, 3)
	return rt, v, q, p, rollout(t, rt, q, p, "SM Entertainment")
}

func TestProposeOnWiki(t *testing.T) {
	rt, v, q, p, tr := wikiRollout(t)
	ctx := context.Background()

	pr, err := v.Propose(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Status != StatusVerified || pr.Turn != 1 || pr.Program == nil || !slices.Equal(pr.Program.Queries, p.Queries) || len(pr.Contexts) != 1 {
		t.Fatalf("proposal %+v", pr)
	}
	if !slices.Equal(pr.Pool, p.Queries) {
		t.Errorf("pool %q, want the program's queries %q", pr.Pool, p.Queries)
	}
	m := pr.Verified[0]
	// The continuation context is built from public parts only: the
	// rollout before the program, the mutated program and the evidence the
	// program prints when run without any gold.
	run := rt.RunProgram(ctx, m.Program, q.Question, nil)
	want := tr.Turns[0].Text + "<think>Search the question first.</think>\n" + "<code>\n" + m.Program.Source() + "</code>" +
		"\n<information>\n" + run.Observation + "</information>\n"
	if pr.Contexts[0] != want {
		t.Fatalf("context:\n%q\nwant\n%q", pr.Contexts[0], want)
	}
	for _, g := range q.GoldIDs {
		if strings.Contains(pr.Contexts[0], g) {
			t.Errorf("gold id %s leaked into the continuation context", g)
		}
	}
	// Gold decides which mutation verifies, never what a context holds:
	// with other gold (a passage only width 5 prints) the same mutation
	// gets the same context.
	other := tr
	extra := slices.DeleteFunc(slices.Clone(m.PrintedIDs), func(id string) bool { return slices.Contains(pr.Original.PrintedIDs, id) })
	other.GoldIDs, other.GoldPassageIDs = extra[:1], nil
	pr2, err := v.Propose(ctx, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr2.Status != StatusVerified || pr2.Verified[0].Program.Source() != m.Program.Source() || pr2.Contexts[0] != pr.Contexts[0] {
		t.Fatalf("with other gold: %s %+v", pr2.Status, pr2.Verified)
	}
}

func TestOnlyLastRetrievalTurn(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	ctx := context.Background()
	q := wikiQuestion(t, qWidth5)
	p := bm25Program(q, 3, 3)
	typed := "<code>\n" + p.Source() + "</code>"
	loop := "<code>\nfor q in [\"a\", \"b\"]:\n    print(sparse(q, k=3))\n</code>"
	earlier := Program{Queries: []string{"YG Entertainment founder"}, Mode: ModeSparse, Width: 3, Print: 3}
	gold := q.GoldIDs
	tests := []struct {
		name     string
		turns    []Turn
		poolMore bool
		status   Status
		turn     int
		reason   string
		pool     []string
	}{
		{"typed last turn after an untyped one", []Turn{{RoleModel, loop}, {RoleObservation, "x"}, {RoleModel, typed}, {RoleObservation, "y"}}, false, StatusVerified, 2, "", p.Queries},
		{"untyped last turn after a typed one", []Turn{{RoleModel, typed}, {RoleObservation, "x"}, {RoleModel, loop}}, false, StatusNotMutable, 2, "turn 2", nil},
		{"no program", []Turn{{RoleModel, "<answer>x</answer>"}}, false, StatusNotMutable, -1, "no model turn", nil},
		{"unclosed code", []Turn{{RoleModel, "<code>print(1)"}}, false, StatusNotMutable, -1, "no model turn", nil},
		{"program in an observation is not the policy's", []Turn{{RoleObservation, typed}}, false, StatusNotMutable, -1, "no model turn", nil},
		{"query from the question variable", []Turn{{RoleModel, "<code>print(sparse(question, k=3))</code>"}}, false, StatusNotMutable, 0, "string literal", nil},
		{"pool from earlier turns", []Turn{{RoleModel, "<code>\n" + earlier.Source() + "</code>"}, {RoleObservation, "x"}, {RoleModel, typed}}, true, StatusVerified, 2, "", append(slices.Clone(p.Queries), earlier.Queries...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifier(t, rt, MutateConfig{PoolFromEarlierTurns: tc.poolMore})
			pr, err := v.Propose(ctx, Trajectory{ID: "t", Question: q.Question, GoldIDs: gold, Turns: tc.turns}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Status != tc.status || pr.Turn != tc.turn || !strings.Contains(pr.Reason, tc.reason) {
				t.Fatalf("status %s turn %d reason %q; want %s turn %d reason containing %q", pr.Status, pr.Turn, pr.Reason, tc.status, tc.turn, tc.reason)
			}
			if tc.pool != nil && !slices.Equal(pr.Pool, tc.pool) {
				t.Errorf("pool %q, want %q", pr.Pool, tc.pool)
			}
			for _, m := range pr.Verified {
				for _, x := range m.Program.Queries {
					if !slices.Contains(pr.Pool, x) {
						t.Errorf("mutation query %q not in the pool", x)
					}
				}
			}
		})
	}
	v := newVerifier(t, rt, MutateConfig{})
	if _, err := v.Propose(ctx, Trajectory{GoldIDs: gold, Turns: []Turn{{"critic", "x"}}}, nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("bad role: %v", err)
	}
	if _, err := v.Propose(ctx, Trajectory{Turns: []Turn{{RoleModel, typed}}}, nil); !errors.Is(err, ErrBadArgument) {
		t.Errorf("no gold: %v", err)
	}
}
