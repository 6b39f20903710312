package sdk

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// Route names as programs see them in Doc.Routes.
const (
	RouteDense  = "dense"
	RouteSparse = "sparse"
)

// Doc is a document as programs see it: a retrieved passage with the score
// of the primitive that produced it (retriever score, RRF score or rerank
// score) and the routes that found it (sorted: "dense", "sparse").
//
// Docs are values; primitives return new slices and never modify their
// inputs. Two Docs are exact duplicates when ID and Contents are equal.
type Doc struct {
	ID       string
	Contents string // `"Title"\ntext`, as stored in the corpus
	Row      int32  // index row
	Score    float64
	Routes   []string
}

// Title is the title line of Contents without quotes.
func (d Doc) Title() string { return rlsearch.Document{Contents: d.Contents}.Title() }

// TitleLine is the first line of Contents as stored (the title in its
// double quotes), "" without a title line (rlsearch.Document.TitleLine).
func (d Doc) TitleLine() string { return rlsearch.Document{Contents: d.Contents}.TitleLine() }

// Text is Contents after the title line.
func (d Doc) Text() string { return rlsearch.Document{Contents: d.Contents}.Text() }

// Dedup removes exact duplicates (same ID and Contents), keeping the first
// occurrence and the input order. The same ID with different Contents is an
// error wrapping ErrConflict (code document_conflict). The result is a new
// slice.
func Dedup(docs []Doc) ([]Doc, error) {
	seen := make(map[string]string, len(docs))
	out := make([]Doc, 0, len(docs))
	for _, d := range docs {
		if c, ok := seen[d.ID]; ok {
			if c != d.Contents {
				return nil, conflict(d.ID)
			}
			continue
		}
		seen[d.ID] = d.Contents
		out = append(out, d)
	}
	return out, nil
}

func conflict(id string) error {
	return newErr(CodeConflict, ErrConflict, "document id %q appears with different contents", id)
}

// Fuse merges ranked lists by reciprocal rank fusion: a document's score is
// the sum over the lists containing it of 1/(k + rank), rank 1-based
// (Cormack et al. 2009; k = 60 in RPL). Exact duplicates inside a list count
// once, at their first rank; the same ID with different contents in any
// list is an error (ErrConflict). The result is sorted by descending fused
// score, ties by ascending Row then ID, and each Doc's Routes is the union
// of its routes in the inputs. The sum is taken over the reciprocal ranks in
// ascending order, so the result does not depend on the order of lists.
func Fuse(lists [][]Doc, k float64) ([]Doc, error) {
	if k < 0 || math.IsNaN(k) || math.IsInf(k, 0) {
		return nil, newErr(CodeRuntime, ErrBadArgument, "fuse: k = %v must be a finite number ≥ 0", k)
	}
	type acc struct {
		doc    Doc
		ranks  []int
		routes []string
	}
	byID := map[string]*acc{}
	var order []*acc
	for _, l := range lists {
		l, err := Dedup(l)
		if err != nil {
			return nil, err
		}
		for r, d := range l {
			a, ok := byID[d.ID]
			if !ok {
				a = &acc{doc: d}
				byID[d.ID] = a
				order = append(order, a)
			} else if a.doc.Contents != d.Contents {
				return nil, conflict(d.ID)
			}
			a.ranks = append(a.ranks, r+1)
			a.routes = append(a.routes, d.Routes...)
		}
	}
	out := make([]Doc, len(order))
	for i, a := range order {
		sort.Sort(sort.Reverse(sort.IntSlice(a.ranks))) // largest rank first = smallest term first
		s := 0.0
		for _, r := range a.ranks {
			s += 1 / (k + float64(r))
		}
		d := a.doc
		d.Score = s
		d.Routes = unionRoutes(a.routes)
		out[i] = d
	}
	sortDocs(out)
	return out, nil
}

// sortDocs orders by descending score, ties by ascending row then id.
func sortDocs(docs []Doc) {
	slices.SortStableFunc(docs, func(a, b Doc) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Row != b.Row:
			if a.Row < b.Row {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func unionRoutes(rs []string) []string {
	out := slices.Clone(rs)
	slices.Sort(out)
	return slices.Compact(out)
}

// rerankDocs reorders docs by the reranker's scores for query (descending,
// ties by input position) and keeps the first k (all when k ≥ len). It
// dedups first (ErrConflict on conflicting ids). It can only reorder and
// cut: a reranker that returns the wrong number of scores, or NaN, is an
// internal error.
func rerankDocs(ctx context.Context, rr rlsearch.Reranker, query string, docs []Doc, k int) ([]Doc, error) {
	if rr == nil {
		return nil, newErr(CodeUnavailable, ErrUnavailable, "rerank: no reranker is configured on this server")
	}
	docs, err := Dedup(docs)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return []Doc{}, nil
	}
	in := make([]rlsearch.Document, len(docs))
	for i, d := range docs {
		in[i] = rlsearch.Document{ID: d.ID, Contents: d.Contents}
	}
	scores, err := rr.Rerank(ctx, query, in)
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w", rr.Name(), err)
	}
	if len(scores) != len(docs) {
		return nil, fmt.Errorf("rerank: %s returned %d scores for %d documents", rr.Name(), len(scores), len(docs))
	}
	idx := make([]int, len(docs))
	for i := range idx {
		if math.IsNaN(float64(scores[i])) {
			return nil, fmt.Errorf("rerank: %s returned NaN for document %q", rr.Name(), docs[i].ID)
		}
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	k = min(k, len(docs))
	out := make([]Doc, k)
	for i := range out {
		d := docs[idx[i]]
		d.Score = float64(scores[idx[i]])
		out[i] = d
	}
	return out, nil
}

func errBadRetriever(r rlsearch.Retriever, want, got int) error {
	return fmt.Errorf("sdk: retriever %s returned %d lists for %d queries", r.Name(), got, want)
}
