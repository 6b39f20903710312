package mutateeval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/progress"
	"github.com/rlsearch/rlsearch/sdk"
)

// ErrNoQuestions: the question set holds no question of the asked datasets.
var ErrNoQuestions = errors.New("mutateeval: no questions")

// Config is one run. Zero fields mean the documented defaults.
type Config struct {
	Questions string   // question set JSONL (bench.LoadQuestions); required
	Datasets  []string // keep only these datasets (nil = all)
	Workers   int      // questions searched at once (0 = 4)
	Progress  io.Writer
}

// Group aggregates the outcome of a set of questions.
type Group struct {
	Questions        int     `json:"questions"`
	Verified         int     `json:"verified"`          // a verified mutation within the budget
	FractionVerified float64 `json:"fraction_verified"` // Verified / Questions
	OriginalVerified int     `json:"original_verified"` // the width-3 program already prints all gold
	// VerifiedWhereOriginalFails: among questions whose original fails
	// V_ret, the fraction that gets a verified mutation.
	VerifiedWhereOriginalFails float64        `json:"fraction_verified_where_original_fails"`
	MeanExecutions             float64        `json:"mean_executions"`
	MeanSearches               float64        `json:"mean_searches"`
	FailedExecutions           int            `json:"failed_executions"`
	SpaceSize                  int            `json:"space_size"` // |U(p)| (the same for every question)
	Distances                  map[string]int `json:"distance_histogram"`
	Widths                     map[int]int    `json:"verified_width_histogram"`
}

// Summary is the JSON report of a run.
type Summary struct {
	QuestionsFile       string            `json:"questions_file"`
	ExecutionsBudget    int               `json:"executions_budget"`
	MinGold             int               `json:"min_gold"`
	Space               sdk.Space         `json:"space"`
	Cache               bool              `json:"cache"`
	Groups              map[string]*Group `json:"groups"` // by dataset, and "all"
	Seconds             float64           `json:"seconds"`
	ExecutionsPerSecond float64           `json:"executions_per_second"`
}

// Run searches every question with v. Errors: those of bench.LoadQuestions,
// ErrNoQuestions, the first failed search (naming the question), ctx.Err().
func Run(ctx context.Context, v *sdk.Verifier, cfg Config) (*Summary, error) {
	qs, err := bench.LoadQuestions(cfg.Questions)
	if err != nil {
		return nil, err
	}
	if len(cfg.Datasets) > 0 {
		qs = slices.DeleteFunc(qs, func(q bench.Question) bool { return !slices.Contains(cfg.Datasets, q.Dataset) })
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%w of datasets %v in %s", ErrNoQuestions, cfg.Datasets, cfg.Questions)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 4
	}
	type outcome struct {
		res sdk.SearchResult
		err error
	}
	outs := make([]outcome, len(qs))
	prog := progress.New(cfg.Progress, "mutate-eval", "questions", len(qs))
	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := sdk.Program{Queries: []string{qs[i].Question}, Mode: sdk.ModeSparse, Width: 3, Print: 3}
				res, err := v.Search(ctx, p, nil, sdk.Gold{IDs: qs[i].GoldIDs}, nil)
				outs[i] = outcome{res, err}
				prog.Add(1)
			}
		}()
	}
	for i := range qs {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	prog.Finish()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	el := time.Since(start)
	groups := map[string]*Group{}
	get := func(k string) *Group {
		if groups[k] == nil {
			groups[k] = &Group{Distances: map[string]int{}, Widths: map[int]int{}}
		}
		return groups[k]
	}
	executions := 0
	for i, o := range outs {
		if o.err != nil {
			return nil, fmt.Errorf("question %s: %w", qs[i].ID, o.err)
		}
		executions += o.res.Executions
		for _, g := range []*Group{get(qs[i].Dataset), get("all")} {
			g.Questions++
			g.MeanExecutions += float64(o.res.Executions)
			g.MeanSearches += float64(o.res.Searches)
			g.FailedExecutions += o.res.Failed
			g.SpaceSize = o.res.SpaceSize
			if o.res.Original != nil && o.res.Original.Verified {
				g.OriginalVerified++
			}
			if len(o.res.Verified) > 0 {
				g.Verified++
				m := o.res.Verified[0]
				g.Distances[m.Distance.String()]++
				g.Widths[m.Program.Width]++
			}
			// A question whose original passes V_ret may still get a
			// verified mutation; count the verified among those whose
			// original fails.
			if o.res.Original != nil && !o.res.Original.Verified && len(o.res.Verified) > 0 {
				g.VerifiedWhereOriginalFails++
			}
		}
	}
	for _, g := range groups {
		n := float64(g.Questions)
		g.FractionVerified = float64(g.Verified) / n
		g.MeanExecutions /= n
		g.MeanSearches /= n
		if f := g.Questions - g.OriginalVerified; f > 0 {
			g.VerifiedWhereOriginalFails /= float64(f)
		} else {
			g.VerifiedWhereOriginalFails = 0
		}
	}
	return &Summary{
		QuestionsFile: cfg.Questions, ExecutionsBudget: v.Config().Executions, MinGold: v.Config().MinGold,
		Space: v.Space(), Cache: !v.Config().NoCache, Groups: groups,
		Seconds: el.Seconds(), ExecutionsPerSecond: float64(executions) / max(el.Seconds(), 1e-9),
	}, nil
}
