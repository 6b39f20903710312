package reward

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// Searcher runs the searches of the retrieval reward on the server's
// retrievers (the ones /retrieve serves, through its result cache), so a
// policy is rewarded by the retriever it is trained against. Safe for
// concurrent use.
type Searcher interface {
	// SearchIDs returns the document ids of the top k results of each
	// query, best first, with retriever ("" = Default). Errors wrapping
	// rlsearch.ErrBadInput are the caller's.
	SearchIDs(ctx context.Context, retriever string, queries []string, k int) ([][]string, error)
	// Retrievers lists the retriever names SearchIDs accepts.
	Retrievers() []string
	// Default is the retriever used for "".
	Default() string
}

// Metric names of the retrieval reward (RetrievalRollout.Metric), besides
// MetricMRR ("mrr": MRR@k, the reciprocal rank within the top k).
const (
	MetricRecall = "recall" // recall@k
	MetricNDCG   = "ndcg"   // NDCG@k
	MetricHit    = "hit"    // hit@k (success@k)
)

// RetrievalMetricNames lists the retrieval reward's metrics in a fixed order.
var RetrievalMetricNames = []string{MetricRecall, MetricNDCG, MetricHit, MetricMRR}

// Limits of the retrieval reward, per rollout.
const (
	// DefaultRetrievalK is k when a rollout gives none: 10, the cutoff
	// DeepRetrieval reports recall and NDCG at for its search engines.
	DefaultRetrievalK = 10
	// MaxRetrievalK bounds k (the server's /retrieve topk bound).
	MaxRetrievalK = 1000
	// MaxRetrievalQueries bounds the queries of one rollout.
	MaxRetrievalQueries = 16
	// MaxRetrievalGold bounds gold_ids and relevance entries of one rollout.
	MaxRetrievalGold = 10_000
	// RetrievalRRFK fuses the lists of a rollout with several queries:
	// reciprocal rank fusion with k = 60 (Cormack, Clarke and Büttcher,
	// SIGIR 2009), the constant the program runtime fuses with.
	RetrievalRRFK = 60
)

// RetrievalRollout is a rollout whose answer is a search query (query
// rewriting: DeepRetrieval, ConvSearch-R1), rewarded by how well the
// retriever's results for it cover the gold documents.
//
// The queries are Query, else Queries, else read from the last <answer>
// block of Response: a JSON string, a JSON list of strings, or a JSON
// object whose "query" is either (DeepRetrieval's
// <answer>{"query": "..."}</answer>); any other text is one query as it
// is. Several queries are searched each at depth k and fused by RRF
// (RetrievalRRFK); the top k of the fusion are scored.
//
// Gold: GoldIDs (alias gold_passage_ids) are relevant with grade 1;
// Relevance gives graded judgements (document id → grade, an integer ≥ 0,
// 0 = judged not relevant) and overrides GoldIDs for the ids it names.
type RetrievalRollout struct {
	ID             string   `json:"id"`
	Response       string   `json:"response,omitempty"`
	Query          *string  `json:"query,omitempty"`
	Queries        []string `json:"queries,omitempty"`
	GoldIDs        []string `json:"gold_ids,omitempty"`
	GoldPassageIDs []string `json:"gold_passage_ids,omitempty"`
	// Relevance is graded relevance, id → grade (trec_eval qrels levels).
	Relevance map[string]float64 `json:"relevance,omitempty"`
	// K is the cutoff (default DefaultRetrievalK, at most MaxRetrievalK).
	K int `json:"k,omitempty"`
	// Metric is the reward: recall (default), ndcg, hit or mrr; every
	// metric is returned either way.
	Metric string `json:"metric,omitempty"`
	// Retriever names the retriever ("" = the server's default).
	Retriever string `json:"retriever,omitempty"`
}

// RetrievalScores are the metrics of one ranked list at cutoff K, with
// trec_eval's definitions (trec_eval 9.0, m_recall.c, m_ndcg_cut.c,
// m_success.c, m_recip_rank.c; the numbers pytrec_eval reports), except
// that ranks are the list's positions (trec_eval re-sorts by score and
// breaks ties by document id descending; the server's lists are already
// sorted, ties by index row). A document is relevant when its grade is
// ≥ 1 (trec_eval's relevance_level 1). R is the number of relevant
// documents.
//
//	recall@K = relevant documents in the top K / R
//	hit@K    = 1 if any of the top K is relevant, else 0 (success@K)
//	mrr@K    = 1 / rank of the first relevant document in the top K, else 0
//	ndcg@K   = DCG@K / IDCG@K, DCG@K = Σ_{i=1..K} grade_i / log2(i + 1)
//	           (trec_eval's linear gain), IDCG@K the DCG@K of the grades
//	           sorted in decreasing order
//
// Every metric is 0 when R is 0 (trec_eval leaves such a query out; a
// reward must be a number), and for an empty list. A document repeated in
// the list counts once, at its first rank; later copies take no rank. A
// list longer than K is cut at K.
type RetrievalScores struct {
	Recall float64 `json:"recall"`
	NDCG   float64 `json:"ndcg"`
	Hit    float64 `json:"hit"`
	MRR    float64 `json:"mrr"`
	// NRelevant is R; NRetrievedRelevant the relevant documents in the top K.
	NRelevant          int `json:"n_relevant"`
	NRetrievedRelevant int `json:"n_retrieved_relevant"`
}

// ScoreRetrieval computes the metrics of ranked (document ids, best first)
// at cutoff k ≥ 0 against graded relevance (id → grade ≥ 0; ids absent
// are grade 0).
func ScoreRetrieval(ranked []string, rel map[string]float64, k int) RetrievalScores {
	var s RetrievalScores
	var grades []float64
	for _, g := range rel {
		if g >= 1 {
			s.NRelevant++
		}
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if s.NRelevant == 0 || k <= 0 {
		return s
	}
	seen := make(map[string]bool, min(len(ranked), k))
	rank := 0
	dcg := 0.0
	for _, id := range ranked {
		if rank == k {
			break
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		rank++
		g := rel[id]
		if g > 0 {
			dcg += g / math.Log2(float64(rank)+1)
		}
		if g < 1 {
			continue
		}
		s.NRetrievedRelevant++
		if s.MRR == 0 {
			s.MRR = 1 / float64(rank)
		}
	}
	if s.NRetrievedRelevant > 0 {
		s.Hit = 1
	}
	s.Recall = float64(s.NRetrievedRelevant) / float64(s.NRelevant)
	slices.SortFunc(grades, func(a, b float64) int { return cmp.Compare(b, a) })
	idcg := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		idcg += g / math.Log2(float64(i)+2)
	}
	if idcg > 0 {
		s.NDCG = dcg / idcg
	}
	return s
}

// RetrievalResult is the retrieval reward of one rollout.
type RetrievalResult struct {
	ID string `json:"id"`
	// Reward is the value of Metric.
	Reward float64 `json:"reward"`
	Metric string  `json:"metric"`
	K      int     `json:"k"`
	// Retriever is the retriever that searched.
	Retriever string `json:"retriever"`
	// Queries are the queries searched; Found is false when the rollout
	// gave none (no query field and no <answer> block): every metric is 0.
	Queries []string `json:"queries"`
	Found   bool     `json:"found"`
	RetrievalScores
	// Retrieved are the ids scored, best first (at most K).
	Retrieved []string `json:"retrieved"`
}

// ErrNoSearcher is the error of a retrieval rollout scored without a
// Searcher (Config.Retrieval.Searcher): `rlsearch serve` has one; the CLI
// needs --index.
var ErrNoSearcher = errors.New("the retrieval reward needs an index to search: POST /v1/rewards/retrieval to `rlsearch serve`, or `rlsearch reward --kind retrieval --index DIR`")

// RetrievalConfig configures the retrieval reward.
type RetrievalConfig struct {
	// Searcher runs the searches; required to score KindRetrieval.
	Searcher Searcher
}

// retrievalJob is a decoded, checked rollout.
type retrievalJob struct {
	r         RetrievalRollout
	queries   []string
	found     bool
	rel       map[string]float64
	k         int
	metric    string
	retriever string
}

// prepareRetrieval decodes and checks rollout i.
func (s *Scorer) prepareRetrieval(i int, raw json.RawMessage) (retrievalJob, error) {
	var j retrievalJob
	r := &j.r
	if err := decodeRollout(i, raw, r); err != nil {
		return j, err
	}
	bad := func(field, format string, a ...any) error {
		return &InputError{Index: i, Field: field, Err: fmt.Errorf(format, a...)}
	}
	sr := s.cfg.Retrieval.Searcher
	if sr == nil {
		return j, &InputError{Index: i, Err: ErrNoSearcher}
	}
	ids := r.GoldIDs
	field := "gold_ids"
	if len(ids) == 0 {
		ids, field = r.GoldPassageIDs, "gold_passage_ids"
	}
	if len(ids) == 0 && len(r.Relevance) == 0 {
		return j, bad("gold_ids", `no gold: give "gold_ids" (relevant document ids) or "relevance" (id → grade)`)
	}
	if len(ids) > MaxRetrievalGold || len(r.Relevance) > MaxRetrievalGold {
		return j, bad(field, "%d gold ids and %d graded ones, at most %d each per rollout", len(ids), len(r.Relevance), MaxRetrievalGold)
	}
	j.rel = make(map[string]float64, len(ids)+len(r.Relevance))
	for _, id := range ids {
		j.rel[id] = 1
	}
	for id, g := range r.Relevance {
		if g < 0 || g != math.Trunc(g) || g > 1e6 {
			return j, bad("relevance", "grade of %s is %v: want an integer ≥ 0 (trec_eval relevance levels; 0 = judged not relevant)", rlsearch.QuoteShort(id), g)
		}
		j.rel[id] = g
	}
	j.k = r.K
	switch {
	case r.K == 0:
		j.k = DefaultRetrievalK
	case r.K < 0 || r.K > MaxRetrievalK:
		return j, bad("k", "%d: want 1..%d (0 or absent = %d)", r.K, MaxRetrievalK, DefaultRetrievalK)
	}
	j.metric = r.Metric
	if j.metric == "" {
		j.metric = MetricRecall
	}
	if !slices.Contains(RetrievalMetricNames, j.metric) {
		return j, bad("metric", "%q is not one of %s", r.Metric, strings.Join(RetrievalMetricNames, ", "))
	}
	j.retriever = r.Retriever
	if j.retriever == "" {
		j.retriever = sr.Default()
	}
	if names := sr.Retrievers(); !slices.Contains(names, j.retriever) {
		return j, bad("retriever", "%q is not served (have %s)", j.retriever, strings.Join(names, ", "))
	}
	switch {
	case r.Query != nil:
		j.queries, j.found = []string{*r.Query}, true
	case r.Queries != nil:
		j.queries, j.found = r.Queries, true
	default:
		if r.Response == "" && !hasKey(raw, "response") {
			return j, missingResponse(i, `(the policy's text with its query in <answer>…</answer>, "" when it wrote nothing; or "query"/"queries")`)
		}
		j.queries, j.found = QueriesFromAnswer(r.Response)
	}
	if len(j.queries) > MaxRetrievalQueries {
		return j, bad("queries", "%d queries, at most %d per rollout", len(j.queries), MaxRetrievalQueries)
	}
	return j, nil
}

// QueriesFromAnswer reads the queries of a query-rewriting policy's
// response from its last <answer> block (ExtractAnswer): a JSON string, a
// JSON list of strings, or a JSON object whose "query" is either
// (DeepRetrieval's format); any other text is one query. found is false
// without an <answer> block. Blank queries are dropped.
func QueriesFromAnswer(response string) (queries []string, found bool) {
	a, ok := ExtractAnswer(response)
	if !ok {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(a), &v) == nil {
		if m, ok := v.(map[string]any); ok {
			v = m["query"]
		}
		switch x := v.(type) {
		case string:
			return nonBlank([]string{x}), true
		case []any:
			var qs []string
			for _, e := range x {
				if s, ok := e.(string); ok {
					qs = append(qs, s)
				}
			}
			return nonBlank(qs), true
		case nil:
			if strings.HasPrefix(strings.TrimSpace(a), "{") { // an object without "query"
				return nil, true
			}
		}
	}
	return nonBlank([]string{a}), true
}

func nonBlank(qs []string) []string {
	out := qs[:0:0]
	for _, q := range qs {
		if strings.TrimSpace(q) != "" {
			out = append(out, q)
		}
	}
	return out
}

// scoreRetrievalBatch searches every rollout's queries with one Searcher
// call per (retriever, k) and scores each rollout.
func (s *Scorer) scoreRetrievalBatch(ctx context.Context, rollouts []json.RawMessage) ([]any, error) {
	jobs := make([]retrievalJob, len(rollouts))
	for i, raw := range rollouts {
		j, err := s.prepareRetrieval(i, raw)
		if err != nil {
			return nil, err
		}
		jobs[i] = j
	}
	type group struct {
		retriever string
		k         int
	}
	lists := make(map[group]map[string][]string) // query → ids
	order := []group{}
	need := map[group][]string{}
	for _, j := range jobs {
		g := group{j.retriever, j.k}
		if _, ok := need[g]; !ok {
			order = append(order, g)
		}
		need[g] = append(need[g], j.queries...)
	}
	sr := s.cfg.Retrieval.Searcher
	for _, g := range order {
		uniq, _ := rlsearch.Distinct(need[g])
		if len(uniq) == 0 {
			continue
		}
		ids, err := sr.SearchIDs(ctx, g.retriever, uniq, g.k)
		if err != nil {
			return nil, fmt.Errorf("reward: retrieval: search %d queries with %s at k = %d: %w", len(uniq), g.retriever, g.k, err)
		}
		if len(ids) != len(uniq) {
			return nil, fmt.Errorf("reward: retrieval: %s returned %d lists for %d queries", g.retriever, len(ids), len(uniq))
		}
		m := make(map[string][]string, len(uniq))
		for i, q := range uniq {
			m[q] = ids[i]
		}
		lists[g] = m
	}
	out := make([]any, len(jobs))
	for i, j := range jobs {
		per := make([][]string, len(j.queries))
		for qi, q := range j.queries {
			per[qi] = lists[group{j.retriever, j.k}][q]
		}
		ranked := fuseIDs(per, j.k)
		res := RetrievalResult{ID: j.r.ID, Metric: j.metric, K: j.k, Retriever: j.retriever, Queries: j.queries, Found: j.found,
			RetrievalScores: ScoreRetrieval(ranked, j.rel, j.k), Retrieved: ranked}
		if res.Queries == nil {
			res.Queries = []string{}
		}
		switch j.metric {
		case MetricRecall:
			res.Reward = res.Recall
		case MetricNDCG:
			res.Reward = res.NDCG
		case MetricHit:
			res.Reward = res.Hit
		case MetricMRR:
			res.Reward = res.MRR
		}
		out[i] = res
	}
	return out, ctx.Err()
}

// fuseIDs returns the top k of lists: the one list itself (its repeats
// dropped), or their reciprocal rank fusion (RetrievalRRFK; a document's
// score is Σ 1/(60 + rank), ties by first appearance across the lists in
// order), never nil.
func fuseIDs(lists [][]string, k int) []string {
	if len(lists) == 1 {
		out := make([]string, 0, min(k, len(lists[0])))
		seen := map[string]bool{}
		for _, id := range lists[0] {
			if len(out) == k {
				break
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		return out
	}
	score := map[string]float64{}
	var ids []string
	for _, l := range lists {
		seen := map[string]bool{}
		rank := 0
		for _, id := range l {
			if seen[id] {
				continue
			}
			seen[id] = true
			rank++
			if _, ok := score[id]; !ok {
				ids = append(ids, id)
			}
			score[id] += 1 / float64(RetrievalRRFK+rank)
		}
	}
	slices.SortStableFunc(ids, func(a, b string) int { return cmp.Compare(score[b], score[a]) })
	if len(ids) > k {
		ids = ids[:k]
	}
	if ids == nil {
		ids = []string{}
	}
	return ids
}
