package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// ExecJSONL runs the programs of a JSONL stream on c, one at a time, and
// writes one JSON line per input line to w, in order: {"id"?, "ids",
// "scores", "total"}, or {"id"?, "error"} for a line that is not a
// program or a program c rejects (rlsearch.ErrBadInput). Each input line
// is a bare program {sql, retrieval_list} or {"id", "program"}; name
// prefixes read errors. Other errors (storage, ctx) stop the stream.
func (c *Collection) ExecJSONL(ctx context.Context, r io.Reader, name string, w io.Writer) error {
	enc := jsonl.NewWriter(w)
	err := jsonl.NewReader(r, name, 0).Each(func(line int, raw []byte) error {
		var pl struct {
			ID      string          `json:"id,omitempty"`
			Program json.RawMessage `json:"program,omitempty"`
		}
		var p Program
		out := map[string]any{}
		err := json.Unmarshal(raw, &pl)
		if err == nil {
			// Decoded as /v1/hybrid/execute decodes a program: unknown
			// keys refused inside "program"; a bare program line may
			// also carry "id", so there only near-misses ("SQL") are.
			if len(pl.Program) > 0 {
				err = jsonbody.Decode(pl.Program, &p, jsonbody.Reject)
			} else {
				err = jsonbody.Decode(raw, &p, jsonbody.Ignore)
			}
		}
		if err != nil {
			out["error"] = fmt.Sprintf("line %d: %v", line, err)
			return enc.Write(out)
		}
		if pl.ID != "" {
			out["id"] = pl.ID
		}
		res, err := c.Execute(ctx, p)
		if err != nil {
			if !errors.Is(err, rlsearch.ErrBadInput) {
				return err
			}
			out["error"] = err.Error()
			return enc.Write(out)
		}
		out["ids"], out["scores"], out["total"] = res.IDs, res.Scores, res.Total
		return enc.Write(out)
	})
	if ferr := enc.Flush(); err == nil {
		err = ferr
	}
	return err
}
