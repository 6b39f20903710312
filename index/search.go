package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rlsearch/rlsearch"
)

// ErrNoRetriever: a retriever name this index does not serve ("e5" needs
// a vector file and an encoder).
var ErrNoRetriever = errors.New("index: retriever not served")

// DefaultRetriever is the retriever a request naming none gets: "e5" when
// the index serves it (a vector file opened with an encoder), else "bm25".
func (ix *Index) DefaultRetriever() string {
	if _, ok := ix.Retrievers()[rlsearch.RetrieverE5]; ok {
		return rlsearch.RetrieverE5
	}
	return rlsearch.RetrieverBM25
}

// RetrieverNames returns the names of Retrievers, sorted.
func (ix *Index) RetrieverNames() []string {
	var out []string
	for n := range ix.Retrievers() {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Retriever returns the retriever called name ("" = DefaultRetriever), or
// an error wrapping ErrNoRetriever that names the ones served.
func (ix *Index) Retriever(name string) (rlsearch.Retriever, error) {
	if name == "" {
		name = ix.DefaultRetriever()
	}
	r, ok := ix.Retrievers()[name]
	if !ok {
		return nil, fmt.Errorf("%w: retriever %q is not available (have %v; e5 needs an encoder, --model)", ErrNoRetriever, name, ix.RetrieverNames())
	}
	return r, nil
}

// Search retrieves the top k passages of each text with the retriever
// called retriever ("" = DefaultRetriever) and returns them with their
// documents and scores, best first: out[i] belongs to texts[i]. Errors:
// ErrNoRetriever, the retriever's, or a docstore read's.
func (ix *Index) Search(ctx context.Context, retriever string, texts []string, k int) ([][]rlsearch.Result, error) {
	r, err := ix.Retriever(retriever)
	if err != nil {
		return nil, err
	}
	hits, err := r.Retrieve(ctx, texts, k)
	if err != nil {
		return nil, err
	}
	out := make([][]rlsearch.Result, len(hits))
	for i, hs := range hits {
		for _, h := range hs {
			d, err := ix.Doc(h.Row)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], rlsearch.Result{Document: d, Score: float64(h.Score)})
		}
	}
	return out, nil
}
