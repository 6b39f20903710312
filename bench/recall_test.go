package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// listRetriever answers query "qN" with the rows in lists[N].
type listRetriever map[string][]int32

func (l listRetriever) Name() string { return "fake" }
func (l listRetriever) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for i, q := range qs {
		for j, r := range l[q] {
			if j < k {
				out[i] = append(out[i], rlsearch.Hit{Row: r, Score: float32(10 - j)})
			}
		}
	}
	return out, nil
}

func TestEvalRecall(t *testing.T) {
	id := func(r int32) (string, error) { return fmt.Sprint("d", r), nil }
	qs := []Question{
		{Question: "q1", Dataset: "a", GoldIDs: []string{"d1", "d2"}}, // d1 at rank 1, d2 at rank 3
		{Question: "q2", Dataset: "a", GoldIDs: []string{"d9"}},       // never found
		{Question: "q3", Dataset: "b", GoldIDs: []string{"d5", "d5"}}, // duplicate gold id counts once; rank 2
		{Question: "q4", Dataset: "b"},                                // no gold: skipped
	}
	r := listRetriever{"q1": {1, 7, 2}, "q2": {3, 4, 5}, "q3": {6, 5}}
	reps, err := EvalRecall(context.Background(), r, id, qs, []int{1, 2, 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		n        int
		any, all [3]float64
		mrr      float64
	}{
		"a":   {2, [3]float64{0.5, 0.5, 0.5}, [3]float64{0, 0, 0.5}, 0.5},
		"b":   {1, [3]float64{0, 1, 1}, [3]float64{0, 1, 1}, 0.5},
		"ALL": {3, [3]float64{1.0 / 3, 2.0 / 3, 2.0 / 3}, [3]float64{0, 1.0 / 3, 2.0 / 3}, 0.5},
	}
	if len(reps) != 3 || reps[2].Dataset != "ALL" {
		t.Fatalf("got %d reports, last %q; want a, b, ALL", len(reps), reps[len(reps)-1].Dataset)
	}
	for _, rep := range reps {
		w := want[rep.Dataset]
		if rep.N != w.n || math.Abs(rep.MRR-w.mrr) > 1e-9 {
			t.Errorf("%s: n=%d mrr=%v, want %d %v", rep.Dataset, rep.N, rep.MRR, w.n, w.mrr)
		}
		for i, k := range []int{1, 2, 3} {
			if math.Abs(rep.Any[k]-w.any[i]) > 1e-9 || math.Abs(rep.All[k]-w.all[i]) > 1e-9 {
				t.Errorf("%s@%d: any %v all %v, want %v %v", rep.Dataset, k, rep.Any[k], rep.All[k], w.any[i], w.all[i])
			}
		}
	}
	var sb strings.Builder
	WriteRecallTable(&sb, "fake", []int{1, 2, 3}, reps)
	if !strings.Contains(sb.String(), "any@1") || !strings.Contains(sb.String(), "0.667") {
		t.Errorf("table:\n%s", sb.String())
	}
}

func TestLoadQuestionsErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(p, []byte("{\"question\": \"ok\"}\n{\"id\": \"x\"}\n"), 0o644)
	if _, err := LoadQuestions(p); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v, want one naming line 2", err)
	}
	os.WriteFile(p, []byte("{\"question\": \"ok\"}\nnot json\n"), 0o644)
	if _, err := LoadQuestions(p); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v, want one naming line 2", err)
	}
}

// TestLoadQuestionsCountsEmptyGolds: golds that normalise to "" ("A", "The
// The", "!!!") are counted by line when a question set loads; blank and
// ordinary golds are not.
func TestLoadQuestionsCountsEmptyGolds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(p, []byte(`{"question": "q1", "golden_answers": ["Paris"]}
{"question": "q2", "golden_answers": ["A"]}
{"question": "q3", "golden_answers": ["", " "]}
{"question": "q4", "golden_answers": ["x", "The The"]}
{"question": "q5", "golden_answers": ["!!!"]}
`), 0o644)
	qs, st, err := LoadQuestionsStats(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 5 || st.Questions != 5 || st.GoldEmptyAfterNormalize != 3 || !slices.Equal(st.GoldEmptyLines, []int{2, 4, 5}) {
		t.Fatalf("stats %+v for %d questions, want 3 of 5 at lines 2, 4, 5", st, len(qs))
	}
	if w := st.Warning(p); !strings.Contains(w, p) || !strings.Contains(w, "3 of 5") {
		t.Errorf("warning %q should name the file and the count", w)
	}
	if w := (LoadStats{Questions: 1}).Warning(p); w != "" {
		t.Errorf("warning %q for a clean set, want none", w)
	}
}
