package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/corpus"
)

// Question, LoadStats, LoadQuestions, LoadQuestionsStats and Texts are
// package corpus's (question sets are read by the serving binary's search
// command too, which does not link the harness).
type (
	Question  = corpus.Question
	LoadStats = corpus.LoadStats
)

// LoadQuestions is corpus.LoadQuestions.
func LoadQuestions(path string) ([]Question, error) { return corpus.LoadQuestions(path) }

// LoadQuestionsStats is corpus.LoadQuestionsStats.
func LoadQuestionsStats(path string) ([]Question, LoadStats, error) {
	return corpus.LoadQuestionsStats(path)
}

// RecallReport holds the recall of one dataset (or "ALL").
type RecallReport struct {
	Dataset string
	N       int             // questions with at least one gold passage
	Any     map[int]float64 // k -> recall@k, any gold passage retrieved
	All     map[int]float64 // k -> recall@k, all gold passages retrieved
	MRR     float64         // MRR@max(ks) of the first gold passage
}

// DocID maps an index row to its passage id.
type DocID func(row int32) (string, error)

// EvalRecall retrieves max(ks) passages for every question (in batches of
// batch queries; 0 = 64) and reports recall@k per dataset, then over all
// questions as "ALL". Questions without gold ids are skipped.
func EvalRecall(ctx context.Context, r rlsearch.Retriever, id DocID, qs []Question, ks []int, batch int) ([]RecallReport, error) {
	if len(ks) == 0 {
		return nil, fmt.Errorf("bench: no k given")
	}
	kmax := slices.Max(ks)
	if batch <= 0 {
		batch = 64
	}
	var use []Question
	for _, q := range qs {
		if len(q.GoldIDs) > 0 {
			use = append(use, q)
		}
	}
	byDS := map[string]*RecallReport{}
	get := func(ds string) *RecallReport {
		if byDS[ds] == nil {
			byDS[ds] = &RecallReport{Dataset: ds, Any: map[int]float64{}, All: map[int]float64{}}
		}
		return byDS[ds]
	}
	for lo := 0; lo < len(use); lo += batch {
		part := use[lo:min(lo+batch, len(use))]
		texts := make([]string, len(part))
		for i, q := range part {
			texts[i] = q.Question
		}
		hits, err := r.Retrieve(ctx, texts, kmax)
		if err != nil {
			return nil, err
		}
		for i, q := range part {
			ids := make([]string, len(hits[i]))
			for j, h := range hits[i] {
				if ids[j], err = id(h.Row); err != nil {
					return nil, err
				}
			}
			for _, rep := range []*RecallReport{get(q.Dataset), get("ALL")} {
				rep.N++
				for _, k := range ks {
					found := countGold(ids[:min(k, len(ids))], q.GoldIDs)
					if found > 0 {
						rep.Any[k]++
					}
					if found == len(uniq(q.GoldIDs)) {
						rep.All[k]++
					}
				}
				for j, id := range ids {
					if slices.Contains(q.GoldIDs, id) {
						rep.MRR += 1 / float64(j+1)
						break
					}
				}
			}
		}
	}
	names := make([]string, 0, len(byDS))
	for ds := range byDS {
		if ds != "ALL" {
			names = append(names, ds)
		}
	}
	sort.Strings(names)
	if len(byDS) > 0 {
		names = append(names, "ALL")
	}
	out := make([]RecallReport, 0, len(names))
	for _, ds := range names {
		rep := byDS[ds]
		for _, k := range ks {
			rep.Any[k] /= float64(rep.N)
			rep.All[k] /= float64(rep.N)
		}
		rep.MRR /= float64(rep.N)
		out = append(out, *rep)
	}
	return out, nil
}

func uniq(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return slices.Compact(s)
}

func countGold(got, gold []string) int {
	n := 0
	for _, g := range uniq(gold) {
		if slices.Contains(got, g) {
			n++
		}
	}
	return n
}

// WriteRecallTable prints reports as an aligned table.
func WriteRecallTable(w io.Writer, retriever string, ks []int, reps []RecallReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "retriever\tdataset\tquestions\t")
	for _, k := range ks {
		fmt.Fprintf(tw, "any@%d\t", k)
	}
	for _, k := range ks {
		fmt.Fprintf(tw, "all@%d\t", k)
	}
	fmt.Fprintf(tw, "MRR@%d\t\n", slices.Max(ks))
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t", retriever, r.Dataset, r.N)
		for _, k := range ks {
			fmt.Fprintf(tw, "%.3f\t", r.Any[k])
		}
		for _, k := range ks {
			fmt.Fprintf(tw, "%.3f\t", r.All[k])
		}
		fmt.Fprintf(tw, "%.3f\t\n", r.MRR)
	}
	return tw.Flush()
}
