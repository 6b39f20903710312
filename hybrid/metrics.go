package hybrid

import (
	"math"
	"sort"
)

// Metrics are ProRetrieval's evaluation metrics (§4.1) over a set of
// instances; relevance is membership in the instance's ground-truth set T
// (binary). A failed execution scores 0 on every ranking metric.
type Metrics struct {
	N           int     `json:"n"`
	ExecSuccess float64 `json:"exec_success"` // share of programs that executed
	Hit1        float64 `json:"hit@1"`        // top-1 row ∈ T
	Hit3        float64 `json:"hit@3"`        // some row of the top 3 ∈ T
	MRR         float64 `json:"mrr"`          // 1 / rank of the first row ∈ T (0 if none)
	NDCG3       float64 `json:"ndcg@3"`       // binary gains, log2 discount, ideal = min(3, |T|) relevant rows
}

// Report groups metrics overall, per level and per modality.
type Report struct {
	All        Metrics            `json:"all"`
	ByLevel    map[string]Metrics `json:"by_level"`
	ByModality map[string]Metrics `json:"by_modality"`
}

// Scores are one instance's metric values.
type Scores struct {
	Executed bool
	Hit1     float64
	Hit3     float64
	RR       float64
	NDCG3    float64
}

// Score computes one instance's metrics for a ranked id list; executed is
// false when the program failed (all scores are then 0).
func Score(truth []string, ranked []string, executed bool) Scores {
	if !executed {
		return Scores{}
	}
	rel := make(map[string]bool, len(truth))
	for _, id := range truth {
		rel[id] = true
	}
	s := Scores{Executed: true}
	var dcg float64
	for i, id := range ranked {
		if !rel[id] {
			continue
		}
		if s.RR == 0 {
			s.RR = 1 / float64(i+1)
		}
		if i < 1 {
			s.Hit1 = 1
		}
		if i < 3 {
			s.Hit3 = 1
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	var idcg float64
	for i := range min(3, len(rel)) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		s.NDCG3 = dcg / idcg
	}
	return s
}

// Evaluate aggregates per-instance scores (scores[i] belongs to insts[i]).
func Evaluate(insts []Instance, scores []Scores) Report {
	type acc struct {
		n                    int
		ex, h1, h3, rr, ndcg float64
	}
	add := func(a *acc, s Scores) {
		a.n++
		if s.Executed {
			a.ex++
		}
		a.h1 += s.Hit1
		a.h3 += s.Hit3
		a.rr += s.RR
		a.ndcg += s.NDCG3
	}
	final := func(a *acc) Metrics {
		if a.n == 0 {
			return Metrics{}
		}
		n := float64(a.n)
		return Metrics{N: a.n, ExecSuccess: a.ex / n, Hit1: a.h1 / n, Hit3: a.h3 / n, MRR: a.rr / n, NDCG3: a.ndcg / n}
	}
	var all acc
	lv, md := map[string]*acc{}, map[string]*acc{}
	for i, in := range insts {
		add(&all, scores[i])
		if lv[in.Level] == nil {
			lv[in.Level] = &acc{}
		}
		add(lv[in.Level], scores[i])
		if md[in.Modality] == nil {
			md[in.Modality] = &acc{}
		}
		add(md[in.Modality], scores[i])
	}
	r := Report{All: final(&all), ByLevel: map[string]Metrics{}, ByModality: map[string]Metrics{}}
	for _, k := range sortedKeys(lv) {
		r.ByLevel[k] = final(lv[k])
	}
	for _, k := range sortedKeys(md) {
		r.ByModality[k] = final(md[k])
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
