package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server"
)

// searchChunk is the most queries passed to one Retrieve call by the
// retrieval reward's searcher, as /retrieve's server.DefaultChunkQueries,
// so a 4,096-rollout batch keeps a retriever's per-call memory bounded.
const searchChunk = server.DefaultChunkQueries

// NewSearcher is the retrieval reward's reward.Searcher over retrievers
// (by API name; `serve` passes the cached ones /retrieve uses) and docs,
// with def the retriever for "". Lists are cleaned as /retrieve cleans
// them: padding rows (< 0) dropped, a row outside docs an error; blank
// queries get an empty list without a search. Safe for concurrent use
// when the retrievers and docs are.
func NewSearcher(retrievers map[string]rlsearch.Retriever, docs server.DocSource, def string) reward.Searcher {
	names := make([]string, 0, len(retrievers))
	for n := range retrievers {
		names = append(names, n)
	}
	slices.Sort(names)
	return &searcher{rs: retrievers, docs: docs, def: def, names: names}
}

type searcher struct {
	rs    map[string]rlsearch.Retriever
	docs  server.DocSource
	def   string
	names []string
}

func (s *searcher) Retrievers() []string { return slices.Clone(s.names) }
func (s *searcher) Default() string      { return s.def }

func (s *searcher) SearchIDs(ctx context.Context, name string, queries []string, k int) ([][]string, error) {
	if name == "" {
		name = s.def
	}
	r := s.rs[name]
	if r == nil {
		return nil, fmt.Errorf("%w: retriever %q is not served (have %s)", rlsearch.ErrBadInput, name, strings.Join(s.names, ", "))
	}
	out := make([][]string, len(queries))
	var texts []string
	var where []int
	for i, q := range queries {
		out[i] = []string{}
		if strings.TrimSpace(q) != "" {
			texts = append(texts, q)
			where = append(where, i)
		}
	}
	n := s.docs.Len()
	for lo := 0; lo < len(texts); lo += searchChunk {
		hi := min(lo+searchChunk, len(texts))
		hits, err := r.Retrieve(ctx, texts[lo:hi], k)
		if err != nil {
			return nil, err
		}
		if len(hits) != hi-lo {
			return nil, fmt.Errorf("app: retriever %s returned %d lists for %d queries", name, len(hits), hi-lo)
		}
		for j, l := range hits {
			ids := out[where[lo+j]]
			for _, h := range l {
				if h.Row < 0 {
					continue
				}
				if int(h.Row) >= n {
					return nil, fmt.Errorf("app: retriever %s returned row %d outside the corpus of %d documents for %s", name, h.Row, n, rlsearch.QuoteShort(texts[lo+j]))
				}
				d, err := server.DocOf(ctx, s.docs, h.Row)
				if err != nil {
					return nil, err
				}
				ids = append(ids, d.ID)
			}
			out[where[lo+j]] = ids
		}
	}
	return out, nil
}
