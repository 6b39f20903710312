package server

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// SearchHit is one hit of Server.Search: the passage's row in the index
// (-1 for a DocRetriever's documents, which have no local row), its score
// (higher is better) and the passage.
type SearchHit struct {
	Row   int32
	Score float32
	Doc   rlsearch.Document
}

// Search is /retrieve's retrieval for other front ends (the MCP server):
// the same limits (k in [1, MaxTopK], at most MaxQueries queries and
// MaxResults hits), the same cleaning (padding and repeated rows dropped,
// blank queries answered with an empty list, NaN scores refused) and the
// same retrievers and cache, so its hits are /retrieve's hits for the same
// queries and k. retriever "" is Config.Default. Errors wrap
// rlsearch.ErrBadInput (a *rlsearch.FieldError naming "retriever",
// "queries" or "k") for bad arguments; a retriever's errors otherwise.
// If a retriever reports the answer unavailable (MarkUnavailable), that
// error is returned. Safe for concurrent use.
func (s *Server) Search(ctx context.Context, retriever string, queries []string, k int) ([][]SearchHit, error) {
	if retriever == "" {
		retriever = s.cfg.Default
	}
	name, r, err := s.lookupRetriever(retriever)
	if err != nil {
		return nil, err
	}
	switch {
	case k < 1 || k > s.cfg.MaxTopK:
		return nil, rlsearch.BadField("k", "k must be between 1 and %d, got %d", s.cfg.MaxTopK, k)
	case len(queries) > s.cfg.MaxQueries:
		return nil, rlsearch.TooLarge("queries", "too many queries: %d > %d per request", len(queries), s.cfg.MaxQueries)
	}
	if err := s.resultsLimit(len(queries), k, "k"); err != nil {
		return nil, err
	}
	req := &retrieveRequest{queries: queries, topK: k, name: name, retriever: r}
	ctx, nt := withNotes(ctx)
	hits, docs, ends, err := s.search(ctx, req)
	if _, unavailable := nt.result(); err == nil && unavailable != nil {
		err = unavailable
	}
	if err != nil {
		return nil, err
	}
	out := make([][]SearchHit, len(queries))
	start := 0
	for i, end := range ends {
		out[i] = make([]SearchHit, 0, end-start)
		for j := start; j < end; j++ {
			h := SearchHit{Row: hits[j].Row, Score: hits[j].Score}
			if docs != nil {
				h.Doc, h.Row = docs[j], -1
			} else if h.Doc, err = DocOf(ctx, s.cfg.Docs, hits[j].Row); err != nil {
				return nil, fmt.Errorf("document of row %d: %w", hits[j].Row, err)
			}
			out[i] = append(out[i], h)
		}
		start = end
	}
	return out, nil
}
