package reward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// ScoreJSONL scores rollouts of kind read as JSONL from r (blank lines
// skipped) in batches of batch rollouts (values < 1 mean 1) and writes one
// JSON result per rollout to w, in input order. After each batch,
// afterBatch (nil = none; the judge cache's Save) runs and w is flushed,
// so a long stream shows its results as it goes. Errors name the input
// line: a line that is not JSON, an *InputError of ScoreBatch ("line N:
// field: reason"), and afterBatch's, read and write errors.
func (s *Scorer) ScoreJSONL(ctx context.Context, kind Kind, batch int, r io.Reader, w io.Writer, afterBatch func() error) error {
	batch = max(batch, 1)
	out := jsonl.NewWriter(w)
	var raws []json.RawMessage
	var lines []int
	flush := func() error {
		if len(raws) == 0 {
			return nil
		}
		res, err := s.ScoreBatch(ctx, kind, raws)
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return fmt.Errorf("line %d: %s: %v", lines[ie.Index], ie.Field, ie.Err)
			}
			return err
		}
		for _, x := range res {
			if err := out.Write(x); err != nil {
				return err
			}
		}
		raws, lines = raws[:0], lines[:0]
		if afterBatch != nil {
			if err := afterBatch(); err != nil {
				return err
			}
		}
		return out.Flush()
	}
	err := jsonl.NewReader(r, "", 0).Each(func(line int, raw []byte) error {
		if !json.Valid(raw) {
			return fmt.Errorf("line %d: not a JSON value", line)
		}
		raws = append(raws, slices.Clone(raw))
		lines = append(lines, line)
		if len(raws) == batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
