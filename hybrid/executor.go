package hybrid

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// Executor runs programs by collection name; it satisfies
// reward.HybridExecutor (the ProRetrieval hierarchical reward's executor):
//
//	Execute(ctx, collection, program json.RawMessage) (ranked []string, err error)
//
// ranked are the result ids in the order documented on Result (at most the
// collection's MaxResults). Errors wrap rlsearch.ErrBadInput for a bad
// program or an unknown collection; ctx.Err() is returned unwrapped when
// ctx ends. Safe for concurrent use.
type Executor struct {
	cols map[string]*Collection
}

// NewExecutor serves the given collections by Schema.Name; the map is not
// copied and must not change afterwards.
func NewExecutor(cols map[string]*Collection) *Executor { return &Executor{cols: cols} }

// Execute implements reward.HybridExecutor.
func (e *Executor) Execute(ctx context.Context, collection string, program json.RawMessage) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if collection == "" {
		return nil, fmt.Errorf("%w: hybrid: the rollout names no collection (field \"collection\" is required to execute a program)", rlsearch.ErrBadInput)
	}
	c, ok := e.cols[collection]
	if !ok {
		return nil, fmt.Errorf("%w: hybrid: unknown collection %q", rlsearch.ErrBadInput, truncate(collection, 60))
	}
	var p Program
	dec := json.NewDecoder(bytes.NewReader(program))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: hybrid: program is not {\"sql\", \"retrieval_list\"}: %v", rlsearch.ErrBadInput, err)
	}
	res, err := c.Execute(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return res.IDs, nil
}
