package hybrideval

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// Config is one run.
type Config struct {
	Instances   string // instances JSONL from `rlsearch-bench hybrid-gen` (required)
	Predictions string // predicted programs JSONL {"id", "program"}; "" scores the gold programs
}

// Result holds the instances, their scores (same order) and the report.
type Result struct {
	Instances []hybrid.Instance
	Scores    []hybrid.Scores
	Report    hybrid.Report
}

// InstanceScore is one line of the per-instance scores file.
type InstanceScore struct {
	ID       string        `json:"id"`
	Level    string        `json:"level"`
	Modality string        `json:"modality"`
	Scores   hybrid.Scores `json:"scores"`
}

// PerInstance lists each instance's scores.
func (r *Result) PerInstance() []InstanceScore {
	out := make([]InstanceScore, len(r.Instances))
	for i, in := range r.Instances {
		out[i] = InstanceScore{ID: in.ID, Level: in.Level, Modality: in.Modality, Scores: r.Scores[i]}
	}
	return out
}

// Run loads cfg's files and executes every program on col. A prediction
// that is missing or does not parse as a program counts as an execution
// failure, as does a program the collection rejects (rlsearch.ErrBadInput).
// Errors: unreadable or malformed input files (naming file and line), and
// any other execution error (ctx, storage).
func Run(ctx context.Context, col *hybrid.Collection, cfg Config) (*Result, error) {
	var insts []hybrid.Instance
	if err := eachLine(cfg.Instances, func(r *jsonl.Reader, line int, raw []byte) error {
		var in hybrid.Instance
		if err := json.Unmarshal(raw, &in); err != nil {
			return r.Errorf(line, "%w", err)
		}
		insts = append(insts, in)
		return nil
	}); err != nil {
		return nil, err
	}
	var preds map[string]*hybrid.Program
	if cfg.Predictions != "" {
		preds = map[string]*hybrid.Program{}
		if err := eachLine(cfg.Predictions, func(r *jsonl.Reader, line int, raw []byte) error {
			var pl struct {
				ID      string          `json:"id"`
				Program json.RawMessage `json:"program"`
			}
			if err := json.Unmarshal(raw, &pl); err != nil || pl.ID == "" {
				return r.Errorf(line, "want {\"id\", \"program\"}")
			}
			var p hybrid.Program
			if json.Unmarshal(pl.Program, &p) != nil {
				p = hybrid.Program{} // unparsable output: counts as an execution failure
			}
			preds[pl.ID] = &p
			return nil
		}); err != nil {
			return nil, err
		}
	}
	scores := make([]hybrid.Scores, len(insts))
	for i, in := range insts {
		p := &insts[i].Program
		if preds != nil {
			p = preds[in.ID]
		}
		if p == nil {
			continue // no prediction: execution failure
		}
		res, err := col.Execute(ctx, *p)
		switch {
		case errors.Is(err, rlsearch.ErrBadInput):
			scores[i] = hybrid.Score(in.Truth, nil, false)
		case err != nil:
			return nil, err
		default:
			scores[i] = hybrid.Score(in.Truth, res.IDs, true)
		}
	}
	return &Result{Instances: insts, Scores: scores, Report: hybrid.Evaluate(insts, scores)}, nil
}

func eachLine(path string, fn func(r *jsonl.Reader, line int, raw []byte) error) error {
	f, name, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := jsonl.NewReader(f, name, 0)
	return r.Each(func(line int, raw []byte) error { return fn(r, line, raw) })
}
