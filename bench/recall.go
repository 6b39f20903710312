package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/rlsearch/rlsearch"
)

// Question is one line of a question set (the fields this package uses).
type Question struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	Dataset     string   `json:"dataset"`
	GoldAnswers []string `json:"golden_answers"`
	GoldIDs     []string `json:"gold_passage_ids"`
}

// LoadQuestions reads a JSONL question set. Lines without a question are an
// error naming the line.
func LoadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var qs []Question
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(raw))) > 0 {
			var q Question
			if jerr := json.Unmarshal(raw, &q); jerr != nil {
				return nil, fmt.Errorf("bench: %s line %d: %v", path, line, jerr)
			}
			if q.Question == "" {
				return nil, fmt.Errorf("bench: %s line %d: no \"question\"", path, line)
			}
			if q.Dataset == "" {
				q.Dataset = "all"
			}
			qs = append(qs, q)
		}
		if err == io.EOF {
			return qs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", path, err)
		}
	}
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
