package hybrideval

import (
	"io"

	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// WriteScores writes r.PerInstance() as JSONL to path, atomically, or to
// stdout when path is "-" ("" writes nothing).
func (r *Result) WriteScores(path string, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	return jsonl.WriteFile(path, stdout, func(w *jsonl.Writer) error {
		for _, s := range r.PerInstance() {
			if err := w.Write(s); err != nil {
				return err
			}
		}
		return nil
	})
}
