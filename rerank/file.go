package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// FileConfig configures RunFile.
type FileConfig struct {
	// Query is the one query every document is scored against (required).
	Query string
	// Name names the input in errors (a path, "stdin").
	Name string
	// Open returns the reranker (required). RunFile calls it after the
	// documents were read, so that bad input fails before a model loads,
	// and closes what it returns.
	Open func(context.Context) (*Reranker, error)
}

// RunFile scores the documents of in (see ReadDocuments: {"id",
// "contents"} or {"id", "title", "text"} per line) against cfg.Query and
// writes one JSON line {"id", "score"} per document to out, in input
// order. Nothing is written unless every score is finite: a NaN or ±Inf
// score is a *NonFiniteError naming the query and the document, its input
// line and id. Bad input wraps rlsearch.ErrBadInput and names the line.
func RunFile(ctx context.Context, cfg FileConfig, in io.Reader, out io.Writer) error {
	if cfg.Query == "" || cfg.Open == nil {
		return errors.New("rerank: FileConfig needs Query and Open")
	}
	docs, lines, err := ReadDocuments(in, cfg.Name)
	if err != nil {
		return err
	}
	r, err := cfg.Open(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	scores, err := r.Rerank(ctx, cfg.Query, docs)
	var nf *NonFiniteError
	if errors.As(err, &nf) && nf.Doc >= 0 && nf.Doc < len(lines) {
		return fmt.Errorf("%s line %d: %w", cfg.Name, lines[nf.Doc], err)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, d := range docs {
		if err := enc.Encode(map[string]any{"id": d.ID, "score": scores[i]}); err != nil {
			return fmt.Errorf("document %d (id %q, %s line %d): %w", i, d.ID, cfg.Name, lines[i], err)
		}
	}
	_, err = out.Write(buf.Bytes())
	return err
}
