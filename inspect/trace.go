package inspect

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/sdk"
)

// ProgramTrace is one program of a rollout re-run against a live index
// with every retrieval and rerank call recorded.
type ProgramTrace struct {
	Turn        int           `json:"turn"` // index of the model turn in Rollout.Turns
	Code        sdk.ErrorCode `json:"code"`
	Error       string        `json:"error,omitempty"`
	Observation string        `json:"observation"`
	// MatchesDump says whether the replay printed exactly the observation
	// the dump shows after the program (nil when the dump shows none): a
	// false means the index (or the budgets, or the doc format) is not the
	// one the rollout ran against.
	MatchesDump *bool         `json:"matches_dump"`
	PrintedIDs  []string      `json:"printed_ids"`
	Stats       sdk.Stats     `json:"stats"`
	Calls       []CallTrace   `json:"calls"`
	Reranks     []RerankTrace `json:"reranks"`
	// GoldCovered counts the gold ids among PrintedIDs.
	GoldCovered int `json:"gold_covered"`
}

// CallTrace is one retrieval call of a program: the program's route
// (sdk.RouteDense or RouteSparse), the retriever behind it, the query, the
// width k and the candidates it returned, best first.
type CallTrace struct {
	Route     string      `json:"route"`
	Retriever string      `json:"retriever"`
	Query     string      `json:"query"`
	K         int         `json:"k"`
	Hits      []Candidate `json:"hits"`
}

// RerankTrace is one rerank call: the query and the candidates it was
// given, in the reranker's order (score descending, ties in input order).
type RerankTrace struct {
	Query string      `json:"query"`
	Model string      `json:"model"`
	Hits  []Candidate `json:"hits"`
}

// Candidate is a retrieved document: 1-based rank, id, title, the
// retriever's (or reranker's) score, and whether it is gold (by id, else
// by title) and whether the program printed it.
type Candidate struct {
	Rank    int     `json:"rank"`
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Score   float64 `json:"score"`
	Gold    bool    `json:"gold"`
	Printed bool    `json:"printed"`
}

// Tracer re-runs programs with the configuration of a runtime (its index,
// reranker, budgets and token counter) and records every call. Safe for
// concurrent use.
type Tracer struct {
	rt    *sdk.Runtime
	docs  sdk.Corpus
	route map[string]string // retriever name → route
}

type recKey struct{}

// recorder collects the calls of one program run.
type recorder struct {
	mu      sync.Mutex
	calls   []rawCall
	reranks []rawRerank
}

type rawCall struct {
	retriever, query string
	k                int
	hits             []rlsearch.Hit
}

type rawRerank struct {
	model, query string
	docs         []rlsearch.Document
	scores       []float32
}

func recorderOf(ctx context.Context) *recorder {
	r, _ := ctx.Value(recKey{}).(*recorder)
	return r
}

// recRetriever records the calls made with a recorder in their context.
type recRetriever struct{ rlsearch.Retriever }

func (r recRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	res, err := r.Retriever.Retrieve(ctx, queries, k)
	if rec := recorderOf(ctx); rec != nil && err == nil {
		rec.mu.Lock()
		for i, q := range queries {
			if i < len(res) {
				rec.calls = append(rec.calls, rawCall{r.Name(), q, k, slices.Clone(res[i])})
			}
		}
		rec.mu.Unlock()
	}
	return res, err
}

// recReranker records rerank calls likewise.
type recReranker struct{ rlsearch.Reranker }

func (r recReranker) Rerank(ctx context.Context, query string, docs []rlsearch.Document) ([]float32, error) {
	s, err := r.Reranker.Rerank(ctx, query, docs)
	if rec := recorderOf(ctx); rec != nil && err == nil {
		rec.mu.Lock()
		rec.reranks = append(rec.reranks, rawRerank{r.Name(), query, slices.Clone(docs), slices.Clone(s)})
		rec.mu.Unlock()
	}
	return s, err
}

// NewTracer builds a tracer over cfg, the configuration of the runtime
// whose programs it replays (sdk.Runtime.Config). Errors: sdk.New's.
func NewTracer(cfg sdk.Config) (*Tracer, error) {
	t := &Tracer{docs: cfg.Docs, route: map[string]string{}}
	rs := make(map[string]rlsearch.Retriever, len(cfg.Retrievers))
	for name, r := range cfg.Retrievers {
		rs[name] = recRetriever{r}
	}
	cfg.Retrievers = rs
	if cfg.Reranker != nil {
		cfg.Reranker = recReranker{cfg.Reranker}
	}
	rt, err := sdk.New(cfg)
	if err != nil {
		return nil, err
	}
	t.rt = rt
	c := rt.Config()
	t.route[c.DenseRetriever], t.route[c.SparseRetriever] = sdk.RouteDense, sdk.RouteSparse
	return t, nil
}

// Budgets are the budgets programs are replayed with.
func (t *Tracer) Budgets() sdk.Budgets { return t.rt.Config().Budgets }

// Trace replays every program of r (with r's question, as the program saw
// it) and sets r.Trace. The replays run one after another, without cache,
// so each call is recorded as the program made it. Errors: ctx's, or a
// document the index cannot resolve.
func (t *Tracer) Trace(ctx context.Context, r *Rollout) error {
	gold := newGoldSet(r.GoldIDs, r.GoldTitles)
	r.Trace = []ProgramTrace{}
	for i, tv := range r.Turns {
		if tv.Program == "" {
			continue
		}
		pt, err := t.run(ctx, tv.Program, r.Question, gold)
		if err != nil {
			return err
		}
		pt.Turn = i
		if j := i + 1; j < len(r.Turns) && r.Turns[j].Role == RoleObservation {
			same := r.Turns[j].Observation == pt.Observation
			pt.MatchesDump = &same
		}
		r.Trace = append(r.Trace, pt)
	}
	return nil
}

// Run replays one program.
func (t *Tracer) run(ctx context.Context, code, question string, gold goldSet) (ProgramTrace, error) {
	rec := &recorder{}
	res := t.rt.Run(context.WithValue(ctx, recKey{}, rec), sdk.Request{Code: code, Question: question}, nil)
	if err := ctx.Err(); err != nil {
		return ProgramTrace{}, err
	}
	pt := ProgramTrace{Code: res.Code, Error: res.Error, Observation: res.Observation, PrintedIDs: res.PrintedIDs,
		Stats: res.Stats, Calls: []CallTrace{}, Reranks: []RerankTrace{}}
	printed := map[string]bool{}
	for _, id := range res.PrintedIDs {
		printed[id] = true
		if gold.ids[id] {
			pt.GoldCovered++
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, c := range rec.calls {
		ct := CallTrace{Route: t.route[c.retriever], Retriever: c.retriever, Query: c.query, K: c.k, Hits: make([]Candidate, 0, len(c.hits))}
		for k, h := range c.hits {
			d, err := t.docs.Doc(h.Row)
			if err != nil {
				return ProgramTrace{}, fmt.Errorf("inspect: trace: row %d of %s: %w", h.Row, c.retriever, err)
			}
			ct.Hits = append(ct.Hits, candidate(k+1, d, float64(h.Score), gold, printed))
		}
		pt.Calls = append(pt.Calls, ct)
	}
	for _, rr := range rec.reranks {
		order := make([]int, len(rr.docs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rr.scores[b], rr.scores[a]) })
		rt := RerankTrace{Query: rr.query, Model: rr.model, Hits: make([]Candidate, 0, len(order))}
		for k, i := range order {
			rt.Hits = append(rt.Hits, candidate(k+1, rr.docs[i], float64(rr.scores[i]), gold, printed))
		}
		pt.Reranks = append(pt.Reranks, rt)
	}
	return pt, nil
}

func candidate(rank int, d rlsearch.Document, score float64, gold goldSet, printed map[string]bool) Candidate {
	title := d.Title()
	return Candidate{Rank: rank, ID: d.ID, Title: title, Score: score, Gold: gold.has(d.ID, title, title+")"), Printed: printed[d.ID]}
}
