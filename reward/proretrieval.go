package reward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// HybridExecutor runs a ProRetrieval hybrid program against a collection
// and returns the ids of the matching documents, best first. program is the
// JSON object the policy wrote inside <answer>…</answer>:
// {"sql": "WHERE ...", "retrieval_list": [{"type": "text"|"image", "field": str, "query": str}]}.
//
// An error means the program did not execute (bad SQL, unknown field,
// ...), which scores the execution layer 0 — except ctx.Err(), which
// aborts the batch. Implementations must be safe for concurrent use.
type HybridExecutor interface {
	Execute(ctx context.Context, collection string, program json.RawMessage) (ranked []string, err error)
}

// ProRetrieval defaults. Paper 003 (§3.3) names the four layers of its
// hierarchical reward — format, execution, result, length — but the text
// available here gives no weights or budget; these are chosen here: the
// result, what the trainer optimises, weighs most, and the layers sum to 1.
const (
	DefaultWeightFormat = 0.1
	DefaultWeightExec   = 0.2
	DefaultWeightResult = 0.6
	DefaultWeightLength = 0.1
	// DefaultLengthBudget is the response length, in tokens, past which the
	// length layer decays (to 0 at twice the budget). The paper's programs
	// are a few dozen tokens (003, App. prompts); 512 leaves room for a
	// short reasoning prefix.
	DefaultLengthBudget = 512
)

// Result metrics (ProRetrievalConfig.Metric); the paper reports Hit@1
// (primary), Hit@3, MRR and NDCG@3 (003, §4.1).
const (
	MetricMRR   = "mrr" // default: dense, equals Hit@1 when the top result is relevant
	MetricHit1  = "hit@1"
	MetricHit3  = "hit@3"
	MetricNDCG3 = "ndcg@3"
)

// ProRetrievalConfig configures the ProRetrieval hierarchical reward.
// Zero fields take the defaults (the options convention, rlsearch.Off); a
// zero weight is asked for with rlsearch.Off (any negative value): Param.
type ProRetrievalConfig struct {
	WeightFormat, WeightExec, WeightResult, WeightLength float64 // 0 = the Default weight, Off = 0
	Metric                                               string  // result metric; "" = MetricMRR
	LengthBudget                                         int     // tokens; 0 = DefaultLengthBudget
	// Executor runs programs of rollouts that carry no execution outcome;
	// nil = such rollouts are an input error.
	Executor HybridExecutor
	// Tokens counts response tokens when a rollout does not give
	// ResponseTokens; nil = whitespace-separated words.
	Tokens rlsearch.TokenCounter
}

// Validate reports the first invalid field, naming it.
func (c *ProRetrievalConfig) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"WeightFormat", c.WeightFormat}, {"WeightExec", c.WeightExec}, {"WeightResult", c.WeightResult}, {"WeightLength", c.WeightLength}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("reward: ProRetrievalConfig.%s %v is not a finite weight (0 = the default, negative = rlsearch.Off: 0)", f.name, f.v)
		}
	}
	switch c.Metric {
	case "", MetricMRR, MetricHit1, MetricHit3, MetricNDCG3:
	default:
		return fmt.Errorf("reward: ProRetrievalConfig.Metric %q is not mrr, hit@1, hit@3 or ndcg@3", c.Metric)
	}
	if c.LengthBudget < 0 {
		return fmt.Errorf("reward: ProRetrievalConfig.LengthBudget %d is negative", c.LengthBudget)
	}
	return nil
}

// ProRetrievalRollout is one rollout. Either it carries the execution
// outcome (Executed with Ranked, or ExecError), or the scorer's Executor
// runs the parsed program on Collection.
type ProRetrievalRollout struct {
	ID             string   `json:"id"`
	Collection     string   `json:"collection,omitempty"`
	Response       string   `json:"response"`
	GroundTruth    []string `json:"ground_truth"`
	Executed       bool     `json:"executed,omitempty"`
	Ranked         []string `json:"ranked,omitempty"`
	ExecError      string   `json:"exec_error,omitempty"`
	ResponseTokens *int     `json:"response_tokens,omitempty"`
}

// preExecuted reports whether r carries its execution outcome.
func (r *ProRetrievalRollout) preExecuted() bool { return r.Executed || r.ExecError != "" }

// RetrievalMetrics of a ranked list against a ground-truth set (binary
// relevance; repeated ids count once, at their first rank).
type RetrievalMetrics struct {
	Hit1  float64 `json:"hit@1"`
	Hit3  float64 `json:"hit@3"`
	MRR   float64 `json:"mrr"`
	NDCG3 float64 `json:"ndcg@3"`
}

// ScoreRanking computes Hit@1, Hit@3, MRR (1/rank of the first relevant id,
// whole list) and NDCG@3 (DCG = Σ_{i<3} rel_i/log2(i+2), ideal from
// min(3, |truth|) relevant ids).
// They are ScoreRetrieval's (trec_eval's) definitions with every truth
// id of grade 1.
func ScoreRanking(ranked, truth []string) RetrievalMetrics {
	rel := make(map[string]float64, len(truth))
	for _, t := range truth {
		rel[t] = 1
	}
	at3 := ScoreRetrieval(ranked, rel, 3)
	return RetrievalMetrics{Hit1: ScoreRetrieval(ranked, rel, 1).Hit, Hit3: at3.Hit, MRR: ScoreRetrieval(ranked, rel, len(ranked)).MRR, NDCG3: at3.NDCG}
}

// MultiAnswerFormat is the format credit F of a response whose last
// <answer> block holds a valid program but which has more than one answer
// block (repeated think/answer pairs): less than full credit, so that
// answering once always pays more; 0.5 is chosen (the paper gives no value),
// as Search-P1's answer part gives 0.5 for "some answer block".
const MultiAnswerFormat = 0.5

// AnswerBlocks counts the "<answer>" opening tags of a response (closed or
// not), the tag ExtractAnswer reads.
func AnswerBlocks(response string) int { return strings.Count(response, "<answer>") }

// ProRetrievalResult is every component of a ProRetrieval reward.
//
//	Total = wf·F + F·(we·E + E·(wr·Q + [Q>0]·wl·L))
//
// F (format) ∈ {0, MultiAnswerFormat, 1}: 0 when the last answer block
// does not parse, MultiAnswerFormat when it parses but the response has
// more than one <answer> block, 1 otherwise; E (execution) ∈ {0,1}; Q = the configured metric of the
// result; L = 1 for at most LengthBudget tokens, then 1 − (n−B)/B down to 0.
// Each layer counts only when every earlier one passed (the length layer
// needs a result with Q > 0), so a shorter wrong program is never paid.
type ProRetrievalResult struct {
	ID          string           `json:"id"`
	Total       float64          `json:"total"`
	Format      float64          `json:"format"`
	FormatError string           `json:"format_error,omitempty"`
	Exec        float64          `json:"exec"`
	ExecError   string           `json:"exec_error,omitempty"`
	Result      float64          `json:"result"` // Q, the configured metric (0 when gated)
	Metric      string           `json:"metric"`
	Metrics     RetrievalMetrics `json:"metrics"`
	Length      float64          `json:"length"` // L (0 when gated)
	Tokens      int              `json:"tokens"`
	Ranked      int              `json:"ranked"` // ids returned by execution
}

// ErrNoExecution is returned for a rollout without execution outcome when
// no HybridExecutor is configured.
var ErrNoExecution = errors.New("reward: rollout has no execution outcome (executed/ranked or exec_error) and no executor is configured")

// ProRetrieval scores rollouts with the hierarchical reward. Safe for
// concurrent use when its Executor and Tokens are.
type ProRetrieval struct {
	cfg            ProRetrievalConfig
	wf, we, wr, wl float64
	budget         int
}

// NewProRetrieval validates cfg and applies its defaults.
func NewProRetrieval(cfg ProRetrievalConfig) (*ProRetrieval, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Metric == "" {
		cfg.Metric = MetricMRR
	}
	p := &ProRetrieval{cfg: cfg, wf: Param(cfg.WeightFormat, DefaultWeightFormat), we: Param(cfg.WeightExec, DefaultWeightExec),
		wr: Param(cfg.WeightResult, DefaultWeightResult), wl: Param(cfg.WeightLength, DefaultWeightLength), budget: cfg.LengthBudget}
	if p.budget == 0 {
		p.budget = DefaultLengthBudget
	}
	return p, nil
}

// HybridProgram is the parsed program of ProRetrieval's DSL (paper 003,
// §3.1 and the system prompts of its appendix).
type HybridProgram struct {
	SQL           string           `json:"sql"`
	RetrievalList []RetrievalEntry `json:"retrieval_list"`
}

// RetrievalEntry is one vector-retrieval primitive of a HybridProgram.
type RetrievalEntry struct {
	Type  string `json:"type"` // "text" or "image"
	Field string `json:"field"`
	Query string `json:"query"`
}

var placeholderRE = regexp.MustCompile(`<(text|image)_(\d+)>`)

// ParseHybridProgram checks the format layer: the response's last
// <answer>…</answer> holds exactly one JSON object with a string "sql"
// starting with WHERE and an array "retrieval_list" (no other keys) whose
// entries have type "text" or "image" and non-empty field and query; every
// <text_i>/<image_i> placeholder in sql names an entry of that type (i
// counts entries of the type in order, from 0) and every entry is named.
// It returns the program and its raw JSON, or an error describing the
// first violation. It does not check the SQL grammar (the executor does).
func ParseHybridProgram(response string) (HybridProgram, json.RawMessage, error) {
	var p HybridProgram
	ans, ok := ExtractAnswer(response)
	if !ok {
		return p, nil, errors.New("no <answer>…</answer> block")
	}
	dec := json.NewDecoder(strings.NewReader(ans))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return p, nil, fmt.Errorf("answer is not JSON: %v", err)
	}
	if dec.More() {
		return p, nil, errors.New("answer holds more than one JSON value")
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return p, nil, errors.New("answer is not a JSON object")
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	for k := range fields {
		if k != "sql" && k != "retrieval_list" {
			return p, nil, fmt.Errorf("unknown key %q", k)
		}
	}
	if _, ok := fields["sql"]; !ok {
		return p, nil, errors.New(`missing "sql"`)
	}
	if rl, ok := fields["retrieval_list"]; !ok || bytes.Equal(bytes.TrimSpace(rl), []byte("null")) {
		return p, nil, errors.New(`missing "retrieval_list"`)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, nil, fmt.Errorf("bad program: %v", err)
	}
	sql := strings.TrimSpace(p.SQL)
	if len(sql) < 6 || !strings.EqualFold(sql[:5], "WHERE") || (sql[5] != ' ' && sql[5] != '\n' && sql[5] != '\t' && sql[5] != '(') {
		return p, nil, errors.New(`"sql" does not start with WHERE and a condition`)
	}
	count := map[string]int{}
	for i, e := range p.RetrievalList {
		if e.Type != "text" && e.Type != "image" {
			return p, nil, fmt.Errorf("retrieval_list[%d].type %q is not text or image", i, e.Type)
		}
		if strings.TrimSpace(e.Field) == "" {
			return p, nil, fmt.Errorf("retrieval_list[%d].field is empty", i)
		}
		if strings.TrimSpace(e.Query) == "" {
			return p, nil, fmt.Errorf("retrieval_list[%d].query is empty", i)
		}
		count[e.Type]++
	}
	used := map[string]bool{}
	for _, m := range placeholderRE.FindAllStringSubmatch(sql, -1) {
		i, err := strconv.Atoi(m[2])
		if err != nil || i >= count[m[1]] {
			return p, nil, fmt.Errorf("placeholder %s names no %s entry", m[0], m[1])
		}
		used[m[1]+"_"+m[2]] = true
	}
	for typ, n := range count {
		for i := 0; i < n; i++ {
			if !used[typ+"_"+strconv.Itoa(i)] {
				return p, nil, fmt.Errorf("%s entry %d is not used by a <%s_%d> placeholder", typ, i, typ, i)
			}
		}
	}
	return p, raw, nil
}

// LengthScore is the length layer: 1 for n ≤ budget tokens, then
// 1 − (n−budget)/budget, 0 from twice the budget.
func LengthScore(n, budget int) float64 {
	if n <= budget {
		return 1
	}
	return math.Max(0, 1-float64(n-budget)/float64(budget))
}

// Score scores one rollout. It returns ErrNoExecution for a rollout
// without execution outcome when no executor is configured (after the
// format layer: a rollout failing format needs none), and ctx.Err() when
// ctx ends during execution.
func (s *ProRetrieval) Score(ctx context.Context, r ProRetrievalRollout) (ProRetrievalResult, error) {
	res := ProRetrievalResult{ID: r.ID, Metric: s.cfg.Metric}
	switch {
	case r.ResponseTokens != nil:
		res.Tokens = max(*r.ResponseTokens, 0)
	case s.cfg.Tokens != nil:
		res.Tokens = s.cfg.Tokens.CountTokens(r.Response)
	default:
		res.Tokens = len(strings.Fields(r.Response))
	}
	_, raw, err := ParseHybridProgram(r.Response)
	if err != nil {
		res.FormatError = err.Error()
		return res, nil
	}
	res.Format = 1
	if n := AnswerBlocks(r.Response); n > 1 {
		res.Format = MultiAnswerFormat
		res.FormatError = fmt.Sprintf("%d <answer> blocks, want exactly one (the last is scored, at format %v)", n, MultiAnswerFormat)
	}
	F := res.Format
	res.Total = s.wf * F

	var ranked []string
	switch {
	case r.preExecuted():
		ranked, res.ExecError = r.Ranked, r.ExecError
		if r.ExecError == "" && !r.Executed {
			res.ExecError = "not executed"
		}
	case s.cfg.Executor == nil:
		return ProRetrievalResult{}, ErrNoExecution
	default:
		ranked, err = s.cfg.Executor.Execute(ctx, r.Collection, raw)
		if err != nil {
			if ctx.Err() != nil {
				return ProRetrievalResult{}, ctx.Err()
			}
			res.ExecError = err.Error()
		}
	}
	if res.ExecError != "" {
		return res, nil
	}
	res.Exec = 1
	res.Total += F * s.we
	res.Ranked = len(ranked)
	res.Metrics = ScoreRanking(ranked, r.GroundTruth)
	switch s.cfg.Metric {
	case MetricHit1:
		res.Result = res.Metrics.Hit1
	case MetricHit3:
		res.Result = res.Metrics.Hit3
	case MetricNDCG3:
		res.Result = res.Metrics.NDCG3
	default:
		res.Result = res.Metrics.MRR
	}
	res.Total += F * s.wr * res.Result
	if res.Result > 0 {
		res.Length = LengthScore(res.Tokens, s.budget)
		res.Total += F * s.wl * res.Length
	}
	return res, nil
}
