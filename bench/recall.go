package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/reward"
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
// error naming the line. Questions with a gold answer that normalises to
// the empty string are counted and logged as a warning (log.Printf); see
// LoadQuestionsStats.
func LoadQuestions(path string) ([]Question, error) {
	qs, st, err := LoadQuestionsStats(path)
	if err == nil && st.GoldEmptyAfterNormalize > 0 {
		log.Print(st.Warning(path))
	}
	return qs, err
}

// LoadStats describes a loaded question set.
type LoadStats struct {
	Questions int
	// GoldEmptyAfterNormalize counts the questions with a gold answer that
	// reward.Normalize maps to "" (gold "A", "The The", "!!!"); the reward
	// metrics match such golds by reward.LightTokens and flag them in
	// their results (gold_empty_after_normalize).
	GoldEmptyAfterNormalize int
	GoldEmptyLines          []int // line numbers of the first 20 of them
}

// Warning is the message LoadQuestions logs for s, naming path; "" when
// there is nothing to warn about.
func (s LoadStats) Warning(path string) string {
	if s.GoldEmptyAfterNormalize == 0 {
		return ""
	}
	return fmt.Sprintf("bench: warning: %s: %d of %d questions have a gold answer that normalises to the empty string (lines %v); EM, F1 and contains compare it by its light form (reward.LightTokens)",
		path, s.GoldEmptyAfterNormalize, s.Questions, s.GoldEmptyLines)
}

// LoadQuestionsStats is LoadQuestions without the log: it returns the
// questions and their LoadStats.
func LoadQuestionsStats(path string) ([]Question, LoadStats, error) {
	var st LoadStats
	f, err := os.Open(path)
	if err != nil {
		return nil, st, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var qs []Question
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(raw))) > 0 {
			var q Question
			if jerr := json.Unmarshal(raw, &q); jerr != nil {
				return nil, st, fmt.Errorf("bench: %s line %d: %v", path, line, jerr)
			}
			if q.Question == "" {
				return nil, st, fmt.Errorf("bench: %s line %d: no \"question\"", path, line)
			}
			if q.Dataset == "" {
				q.Dataset = "all"
			}
			if reward.GoldEmptyAfterNormalize(q.GoldAnswers) {
				st.GoldEmptyAfterNormalize++
				if len(st.GoldEmptyLines) < 20 {
					st.GoldEmptyLines = append(st.GoldEmptyLines, line)
				}
			}
			qs = append(qs, q)
		}
		if err == io.EOF {
			st.Questions = len(qs)
			return qs, st, nil
		}
		if err != nil {
			return nil, st, fmt.Errorf("bench: %s: %w", path, err)
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
