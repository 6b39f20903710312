package rerank

import (
	"io"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// ReadDocuments reads documents as JSONL, one {"id", "contents"} or
// {"id", "title", "text"} object per line (blank lines skipped), and
// returns them with the 1-based input line of each. name (a file name,
// "stdin") prefixes errors, which name the line: a malformed line, or a
// document with neither contents nor text.
func ReadDocuments(r io.Reader, name string) ([]rlsearch.Document, []int, error) {
	var docs []rlsearch.Document
	var lines []int
	jr := jsonl.NewReader(r, name, 0)
	err := jr.Each(func(line int, raw []byte) error {
		var d struct {
			ID       string  `json:"id"`
			Contents *string `json:"contents"`
			Title    string  `json:"title"`
			Text     *string `json:"text"`
		}
		// As /rerank decodes a candidate: extra keys pass, near-misses
		// ("Contents", "txt") and wrong types are errors.
		if err := jsonbody.Decode(raw, &d, jsonbody.Ignore); err != nil {
			return jr.Errorf(line, "%w: %v", rlsearch.ErrBadInput, err)
		}
		switch {
		case d.Contents != nil:
			docs = append(docs, rlsearch.Document{ID: d.ID, Contents: *d.Contents})
		case d.Text != nil:
			docs = append(docs, rlsearch.Document{ID: d.ID, Contents: rlsearch.MakeContents(d.Title, *d.Text)})
		default:
			return jr.Errorf(line, "%w: document has neither contents nor text", rlsearch.ErrBadInput)
		}
		lines = append(lines, line)
		return nil
	})
	return docs, lines, err
}
