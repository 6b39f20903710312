package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rlsearch/rlsearch"
)

// Execution budgets of the mutation search (RPL Appendix B: 64 executions
// per program by default, at most 256).
const (
	DefaultExecutions = 64
	MaxExecutions     = 256
	// MaxGoldIDs bounds gold_ids plus gold_passage_ids of one trajectory in
	// a mutate request (multi-hop gold supports have 2–4 ids; 1,024 leaves
	// room for passage-level gold). More is refused with 413 naming the field.
	MaxGoldIDs = 1024
)

// ErrNotVerified is returned when a program given for a record does not
// pass V_ret (or is not a member of U(p)).
var ErrNotVerified = errors.New("sdk: program not verified")

// MutateConfig configures a Verifier. Zero fields mean the documented
// defaults.
type MutateConfig struct {
	// Executions is the execution budget per program: how many mutations
	// are executed at most; 0 means DefaultExecutions (64), at most
	// MaxExecutions (256).
	Executions int `json:"executions,omitempty"`
	// MinGold: V_ret(p') = 1 when the printed evidence holds at least
	// MinGold distinct gold support ids; 0 means all of them (the paper's
	// criterion). A value above the number of gold ids means all.
	MinGold int `json:"min_gold,omitempty"`
	// MaxVerified is how many verified mutations to find before stopping;
	// 0 means 1 (the nearest).
	MaxVerified int `json:"max_verified,omitempty"`
	// Space restricts U(p). Modes that need a route the runtime lacks and
	// reranking without a configured reranker are always left out (they
	// could only fail); Verifier.Space reports the space in use.
	Space Space `json:"space"`
	// PoolFromEarlierTurns adds the queries of earlier typed retrieval
	// turns of a rollout (most recent first) to the pool of the last
	// program, up to MaxPool. Default false: the pool is the last
	// program's queries.
	PoolFromEarlierTurns bool `json:"pool_from_earlier_turns,omitempty"`
	// NoCache verifies every execution with its own retrieval calls, the
	// uncached oracle of the shared primitive cache (for tests and
	// benchmarks).
	NoCache bool `json:"no_cache,omitempty"`
	// SuperviseEarlierTurns marks the policy's turns before the mutated
	// one as supervised in records; default false (they are context).
	SuperviseEarlierTurns bool `json:"supervise_earlier_turns,omitempty"`
	// ObservationTemplate wraps a mutated program's printed evidence in the
	// spliced trajectory; "{observation}" is replaced by the evidence.
	// Empty means: the original observation turn with the original
	// program's evidence replaced by the new one when that evidence
	// appears in it, else DefaultObservationTemplate.
	ObservationTemplate string `json:"observation_template,omitempty"`
}

// DefaultObservationTemplate wraps printed evidence when the rollout's own
// observation turn cannot be reused (Search-R1's <information> block).
const DefaultObservationTemplate = "\n<information>\n{observation}</information>\n"

// Validate reports the first bad field.
func (c MutateConfig) Validate() error {
	switch {
	case c.Executions < 0 || c.Executions > MaxExecutions:
		return fmt.Errorf("%w: MutateConfig.Executions = %d, want 0..%d", ErrBadArgument, c.Executions, MaxExecutions)
	case c.MinGold < 0:
		return fmt.Errorf("%w: MutateConfig.MinGold = %d is negative", ErrBadArgument, c.MinGold)
	case c.MaxVerified < 0:
		return fmt.Errorf("%w: MutateConfig.MaxVerified = %d is negative", ErrBadArgument, c.MaxVerified)
	case c.ObservationTemplate != "" && !strings.Contains(c.ObservationTemplate, "{observation}"):
		return fmt.Errorf("%w: MutateConfig.ObservationTemplate has no {observation}", ErrBadArgument)
	}
	if err := c.Space.Validate(); err != nil {
		return err
	}
	return nil
}

func (c MutateConfig) withDefaults() MutateConfig {
	if c.Executions == 0 {
		c.Executions = DefaultExecutions
	}
	if c.MaxVerified == 0 {
		c.MaxVerified = 1
	}
	return c
}

// Verifier searches U(p) for mutations that pass V_ret, executing them on
// a Runtime. It is safe for concurrent use; every search has its own
// primitive cache.
type Verifier struct {
	rt    *Runtime
	cfg   MutateConfig
	space Space
}

// NewVerifier returns a Verifier over rt. The space is cfg.Space without
// the modes whose route rt lacks and, when rt has no reranker, without
// reranking.
func NewVerifier(rt *Runtime, cfg MutateConfig) (*Verifier, error) {
	if rt == nil {
		return nil, fmt.Errorf("%w: NewVerifier: nil runtime", ErrBadArgument)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rc := rt.Config()
	s := cfg.Space.withDefaults()
	_, dense := rc.Retrievers[rc.DenseRetriever]
	_, sparse := rc.Retrievers[rc.SparseRetriever]
	s.Modes = slices.DeleteFunc(slices.Clone(s.Modes), func(m Mode) bool {
		return (m != ModeSparse && !dense) || (m != ModeDense && !sparse)
	})
	if rc.Reranker == nil {
		s.RerankWidths = []int{0}
	}
	s.Widths = slices.DeleteFunc(slices.Clone(s.Widths), func(w int) bool { return w > rc.Budgets.MaxWidth })
	s.MaxPrint = min(s.MaxPrint, rc.Budgets.MaxPrintedDocs)
	return &Verifier{rt: rt, cfg: cfg, space: s}, nil
}

// Config returns the verifier's configuration with defaults applied.
func (v *Verifier) Config() MutateConfig { return v.cfg }

// Space returns the mutation space in use (defaults applied, restricted to
// what the runtime serves).
func (v *Verifier) Space() Space { return v.space }

// Runtime returns the runtime the verifier executes programs on.
func (v *Verifier) Runtime() *Runtime { return v.rt }

// Gold is the verifier's gold support: document ids. It is used by V_ret
// only and never reaches a program or a continuation context.
type Gold struct {
	IDs []string `json:"ids"`
}

// need is how many distinct gold ids V_ret asks for.
func (v *Verifier) need(g Gold) int {
	n := len(distinct(g.IDs))
	if v.cfg.MinGold > 0 {
		n = min(n, v.cfg.MinGold)
	}
	return n
}

// distinct returns the non-empty xs without repeats, in first-seen order,
// in time linear in len(xs).
func distinct(xs []string) []string {
	var out []string
	seen := make(map[string]struct{}, len(xs))
	for _, x := range xs {
		if _, dup := seen[x]; x != "" && !dup {
			seen[x] = struct{}{}
			out = append(out, x)
		}
	}
	return out
}

// covered counts the distinct gold ids among printed ids, in time linear
// in len(printed)+len(gold).
func covered(printed []string, gold []string) int {
	in := make(map[string]struct{}, len(printed))
	for _, p := range printed {
		in[p] = struct{}{}
	}
	n := 0
	for _, g := range distinct(gold) {
		if _, ok := in[g]; ok {
			n++
		}
	}
	return n
}

// Execution is the outcome of executing one program during a search.
type Execution struct {
	PrintedIDs  []string  `json:"printed_ids"`
	Observation string    `json:"observation"`
	GoldCovered int       `json:"gold_covered"`
	Verified    bool      `json:"verified"` // V_ret = 1
	Code        ErrorCode `json:"code"`
	Error       string    `json:"error,omitempty"`
}

// VerifiedMutation is a mutation p' with V_ret(p') = 1, its canonical
// source and the evidence it printed.
type VerifiedMutation struct {
	Mutation
	Source string `json:"source"` // Program.Source()
	// Execution is the 1-based number of the execution that verified it.
	Execution   int      `json:"execution"`
	PrintedIDs  []string `json:"printed_ids"`
	Observation string   `json:"observation"`
	GoldCovered int      `json:"gold_covered"`
}

// Status says how a mutation search ended.
type Status string

// Statuses of a search; the strings are part of the JSON API. Every item
// of a /v1/programs/mutate proposal response has one of them.
const (
	StatusVerified   Status = "verified"             // at least one verified mutation
	StatusNone       Status = "no_verified_mutation" // the budget ran out or U(p) was exhausted
	StatusNotMutable Status = "not_mutable"          // outside the typed subset; Reason says why
	// StatusSkippedNoGold: the rollout has no gold support ids
	// (gold_ids/gold_passage_ids), so V_ret cannot verify anything; it was
	// not searched (Propose, ProposeBatch; its Error says so).
	StatusSkippedNoGold Status = "skipped_no_gold"
	// StatusError: the search failed (an index failure, the request's
	// context ended); ProposeResult.Error says why.
	StatusError Status = "error"
)

// Statuses lists every Status in a fixed order (the keys of
// MutateSummary).
var Statuses = []Status{StatusVerified, StatusNone, StatusNotMutable, StatusSkippedNoGold, StatusError}

// SearchResult is the outcome of a mutation search over one program.
type SearchResult struct {
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"` // for not_mutable
	// Original is the execution of the unmutated program (the negative
	// control); it does not count against the budget.
	Original *Execution         `json:"original,omitempty"`
	Verified []VerifiedMutation `json:"verified"`
	// Executions is the number of mutations executed (≤ the budget);
	// Failed those that ended with an error code (an observation over the
	// token cap, for example) and so were not verified.
	Executions int `json:"executions"`
	Failed     int `json:"failed"`
	// Searches is the number of retriever calls issued (the original's
	// included): with the shared cache, one per distinct (route, query).
	Searches int `json:"searches"`
	// SpaceSize is |U(p)| and Pool the query pool.
	SpaceSize int      `json:"space_size"`
	Pool      []string `json:"pool"`
	NeedGold  int      `json:"need_gold"` // distinct gold ids V_ret asks for
}

// Search executes the members of U(p) nearest first until MaxVerified of
// them pass V_ret or the execution budget runs out. pool is Q_p (nil means
// p.Queries); gold is seen by V_ret only. With the shared cache (the
// default) every (route, query) the planned executions need is retrieved
// once, at the widest width any of them asks for, and every execution is
// served by slicing it (see Cache); cache, when non-nil, is that cache
// (share one across rollouts of one question), else a fresh one is made.
//
// A program outside the grammar gives StatusNotMutable (no error). Errors:
// ErrBadArgument for no gold, ctx's error, or a retrieval failure of the
// index (code internal_error). Execution errors of a mutation (an
// observation over the token cap) count as spent executions.
func (v *Verifier) Search(ctx context.Context, p Program, pool []string, gold Gold, cache *Cache) (SearchResult, error) {
	res := SearchResult{Pool: pool, Verified: []VerifiedMutation{}}
	if res.Pool == nil {
		res.Pool = p.Queries
	}
	if res.NeedGold = v.need(gold); res.NeedGold == 0 {
		return res, fmt.Errorf("%w: no gold support ids", ErrBadArgument)
	}
	muts, err := Mutations(p, pool, v.space)
	if err != nil {
		if errors.Is(err, ErrNotMutable) {
			res.Status, res.Reason = StatusNotMutable, err.Error()
			return res, nil
		}
		return res, err
	}
	res.SpaceSize = len(muts)
	plan := muts[:min(len(muts), v.cfg.Executions)]
	if v.cfg.NoCache {
		cache = nil
	} else if cache == nil {
		cache = NewCache()
	}
	ex := executor{v: v, rt: v.rt, cache: cache, gold: gold.IDs, need: res.NeedGold}
	if cache != nil {
		ex.rt = v.rt.withScoreMemo()
		ex.widest = map[cacheKey]int{}
		for _, pr := range append([]Program{p}, programsOf(plan)...) {
			for _, c := range pr.calls() {
				k := cacheKey{c.route, c.query}
				ex.widest[k] = max(ex.widest[k], c.k)
			}
		}
		ex.fetched = map[cacheKey]bool{}
	}
	orig, err := ex.run(ctx, p)
	if err != nil {
		return res, err
	}
	res.Original = &orig
	for _, m := range plan {
		e, err := ex.run(ctx, m.Program)
		if err != nil {
			res.Searches = ex.searches
			return res, err
		}
		res.Executions++
		if e.Code != CodeOK {
			res.Failed++
			continue
		}
		if e.Verified {
			res.Verified = append(res.Verified, VerifiedMutation{Mutation: m, Source: m.Program.Source(), Execution: res.Executions,
				PrintedIDs: e.PrintedIDs, Observation: e.Observation, GoldCovered: e.GoldCovered})
			if len(res.Verified) >= v.cfg.MaxVerified {
				break
			}
		}
	}
	res.Searches = ex.searches
	res.Status = StatusNone
	if len(res.Verified) > 0 {
		res.Status = StatusVerified
	}
	return res, nil
}

func programsOf(ms []Mutation) []Program {
	out := make([]Program, len(ms))
	for i, m := range ms {
		out[i] = m.Program
	}
	return out
}

// executor runs the programs of one search.
type executor struct {
	v        *Verifier
	rt       *Runtime // v.rt, or v.rt with a row memo when caching
	cache    *Cache
	widest   map[cacheKey]int // widest width per (route, query) of the plan
	fetched  map[cacheKey]bool
	gold     []string
	need     int
	searches int
}

// run executes p and applies V_ret. It returns an error only for ctx and
// index failures; a program's own failure is in Execution.Code.
func (ex *executor) run(ctx context.Context, p Program) (Execution, error) {
	if err := ctx.Err(); err != nil {
		return Execution{}, err
	}
	rt := ex.rt
	if ex.cache != nil {
		for _, c := range p.calls() {
			k := cacheKey{c.route, c.query}
			key, _ := rt.retrieverKey(c.route)
			r, ok := rt.cfg.Retrievers[key]
			w := max(ex.widest[k], c.k)
			if ok && !rlsearch.PrefixStable(r) {
				// An approximate retriever's (HNSW) narrower widths are
				// not cuts of the widest: every width is its own search.
				w = c.k
				k.query += "\x00" + strconv.Itoa(w)
			}
			if ex.fetched[k] {
				continue
			}
			ex.fetched[k] = true
			if !ok || w > rt.cfg.Budgets.MaxWidth {
				continue // Evaluate reports it
			}
			if _, hit := ex.cache.get(r, c.query, w); hit {
				continue // a shared cache already holds it
			}
			// Fill the cache with the hits only; documents are resolved
			// (once per row, by the Cache) when an execution prints them.
			ex.searches++
			if _, err := (directFetcher{cache: ex.cache}).fetch(ctx, r, c.query, w); err != nil {
				return Execution{}, fmt.Errorf("sdk: mutation search: %s retrieval failed: %w", c.route, err)
			}
		}
	}
	docs, obs, st, err := rt.Evaluate(ctx, p, ex.cache)
	if ex.cache == nil {
		ex.searches += st.RetrievalCalls
		if err != nil && st.RetrievalCalls < p.Calls() {
			ex.searches++ // the failing call was issued too
		}
	}
	if err != nil {
		if ctx.Err() != nil || codeOf(err) == CodeInternal {
			return Execution{}, fmt.Errorf("sdk: mutation search: %w", err)
		}
		return Execution{Code: codeOf(err), Error: err.Error(), PrintedIDs: []string{}}, nil
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	n := covered(ids, ex.gold)
	return Execution{PrintedIDs: ids, Observation: obs, GoldCovered: n, Verified: n >= ex.need, Code: CodeOK}, nil
}

// retrieverKey is the key in Config.Retrievers of the retriever behind a
// route (RouteDense: Config.DenseRetriever, RouteSparse:
// Config.SparseRetriever); ok is false for another route.
func (rt *Runtime) retrieverKey(route string) (key string, ok bool) {
	switch route {
	case RouteDense:
		return rt.cfg.DenseRetriever, true
	case RouteSparse:
		return rt.cfg.SparseRetriever, true
	}
	return "", false
}

// retrieverName is the retriever behind a route, the key of Cache entries.
func (rt *Runtime) retrieverName(route string) string {
	name, _ := rt.retrieverKey(route)
	if r, ok := rt.cfg.Retrievers[name]; ok {
		return r.Name()
	}
	return name
}

// withScoreMemo returns a runtime equal to rt whose rerank scores are
// memoised by (query, document): the executions of one mutation search
// rerank the same passages many times, and each is scored once per rerank
// query (documents are already resolved once per row by the Cache). The
// memo is exact for pointwise rerankers, whose score of a (query,
// document) pair does not depend on the other documents of the call
// (Qwen3-Reranker and cross-encoders score pairs independently).
// It shares rt's slots, so that its RunBatch calls count against rt's
// Config.MaxConcurrent (a Runtime without slots would block every RunBatch
// until its context ended).
func (rt *Runtime) withScoreMemo() *Runtime {
	cfg := rt.cfg
	if cfg.Reranker != nil {
		cfg.Reranker = &scoreMemo{inner: cfg.Reranker, m: map[scoreKey]float32{}}
	}
	return &Runtime{cfg: cfg, slots: rt.slots}
}

// scoreMemo memoises a pointwise reranker's scores. Safe for concurrent use.
type scoreMemo struct {
	inner rlsearch.Reranker
	mu    sync.Mutex
	m     map[scoreKey]float32
}

type scoreKey struct{ query, id, contents string }

func (s *scoreMemo) Name() string { return s.inner.Name() }

func (s *scoreMemo) Rerank(ctx context.Context, query string, docs []rlsearch.Document) ([]float32, error) {
	out := make([]float32, len(docs))
	var miss []rlsearch.Document
	var missAt []int
	s.mu.Lock()
	for i, d := range docs {
		if v, ok := s.m[scoreKey{query, d.ID, d.Contents}]; ok {
			out[i] = v
		} else {
			miss = append(miss, d)
			missAt = append(missAt, i)
		}
	}
	s.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	scores, err := s.inner.Rerank(ctx, query, miss)
	if err != nil {
		return nil, err
	}
	if len(scores) != len(miss) {
		return nil, fmt.Errorf("sdk: reranker %s returned %d scores for %d documents", s.inner.Name(), len(scores), len(miss))
	}
	s.mu.Lock()
	for j, i := range missAt {
		out[i] = scores[j]
		s.m[scoreKey{query, miss[j].ID, miss[j].Contents}] = scores[j]
	}
	s.mu.Unlock()
	return out, nil
}
