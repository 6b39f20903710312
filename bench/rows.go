package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrBadRow is returned for a Row that breaks the contract (empty suite,
// system, config or unit, no repetitions, a negative or non-finite value).
var ErrBadRow = errors.New("bench: bad row")

// Validate checks the contract of a Row that a peer runner wrote.
func (r Row) Validate() error {
	switch {
	case r.Suite == "":
		return fmt.Errorf("%w: empty suite", ErrBadRow)
	case r.System == "":
		return fmt.Errorf("%w: %s: empty system", ErrBadRow, r.Suite)
	case r.Config == "":
		return fmt.Errorf("%w: %s/%s: empty config", ErrBadRow, r.Suite, r.System)
	case r.Unit == "":
		return fmt.Errorf("%w: %s/%s %q: empty unit", ErrBadRow, r.Suite, r.System, r.Config)
	case len(r.Reps) == 0:
		return fmt.Errorf("%w: %s/%s %q: no repetitions", ErrBadRow, r.Suite, r.System, r.Config)
	}
	for i, p := range r.Reps {
		for _, v := range []float64{p.Throughput, p.P50ms, p.P95ms, p.P99ms} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s/%s %q rep %d: value %v", ErrBadRow, r.Suite, r.System, r.Config, i, v)
			}
		}
	}
	return nil
}

// ReadRows decodes a peer runner's output, a JSON array of Row, and
// validates every row.
func ReadRows(r io.Reader) ([]Row, error) {
	var rows []Row
	if err := json.NewDecoder(r).Decode(&rows); err != nil {
		return nil, fmt.Errorf("%w: want a JSON array of rows: %v", ErrBadRow, err)
	}
	for i, row := range rows {
		if err := row.Validate(); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return rows, nil
}
