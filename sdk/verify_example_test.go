package sdk

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// exRanked is a toy retriever: every query ranks rows 0, 1, 2, ... in order.
type exRanked struct{}

func (exRanked) Name() string { return "bm25" }

// PrefixStable is true: a top-k list is the first k of any wider one, so
// the mutation search fetches each query once at its widest width.
func (exRanked) PrefixStable() bool { return true }

func (exRanked) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for j := range qs {
		for i := range k {
			out[j] = append(out[j], rlsearch.Hit{Row: int32(i), Score: float32(-i)})
		}
	}
	return out, nil
}

type exDocs struct{}

func (exDocs) Doc(row int32) (rlsearch.Document, error) {
	return rlsearch.Document{ID: fmt.Sprintf("wiki-%d", row), Contents: fmt.Sprintf("\"Page %d\"\nText %d.", row, row)}, nil
}

// The two-step API: propose verified mutations of a rollout's last
// program, let the policy regenerate a continuation from the context, then
// build the D_mut record. Gold (wiki-3, ranked 4th) is seen by the
// verifier only; the width-3 program misses it, width 5 prints it.
func ExampleVerifier_Propose() {
	rt, _ := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": exRanked{}}, Docs: exDocs{}})
	v, _ := NewVerifier(rt, MutateConfig{}) // 64 executions, all gold, BM25-only space
	tr := Trajectory{
		ID: "r1", Question: "Which page?", GoldIDs: []string{"wiki-3"}, GoldenAnswers: []string{"Page 3"},
		Turns: []Turn{
			{Role: "prompt", Text: "Question: Which page?\n"},
			{Role: "model", Text: "<code>\ndocs = sparse(\"which page\", k=3)\nprint(docs[:3])\n</code>"},
			{Role: "observation", Text: "<information>...</information>\n"},
			{Role: "model", Text: "<answer>Page 1</answer>"},
		},
	}
	ctx := context.Background()
	pr, _ := v.Propose(ctx, tr, nil)
	m := pr.Verified[0]
	fmt.Println(pr.Status, "after", pr.Executions, "execution(s),", pr.Searches, "search; distance", m.Distance)
	fmt.Print(m.Source)
	fmt.Printf("original printed %v, mutation printed %v\n", pr.Original.PrintedIDs, m.PrintedIDs)

	rec, _ := v.BuildRecord(ctx, RecordRequest{Trajectory: tr, Program: m.Program, Continuation: "<answer>Page 3</answer>"}, nil)
	for _, s := range rec.Spans {
		fmt.Printf("%-12s [%d,%d) supervised=%v\n", s.Kind, s.Start, s.End, s.Supervised)
	}
	// Output:
	// verified after 1 execution(s), 1 search; distance 0/0/0/1/0
	// docs = sparse("which page", k=5)
	// print(docs[:5])
	// original printed [wiki-0 wiki-1 wiki-2], mutation printed [wiki-0 wiki-1 wiki-2 wiki-3 wiki-4]
	// prompt       [0,22) supervised=false
	// program      [22,85) supervised=true
	// observation  [85,270) supervised=false
	// continuation [270,278) supervised=true
	// answer       [278,284) supervised=true
	// continuation [284,293) supervised=true
}
