package rlsearch

import (
	"context"
	"fmt"
)

// The determinism contract (DESIGN.md): an answer is a function of (index
// build, request, server settings) only. Layers that share work between
// requests (a batching queue, a result cache, a program coalescer) may ask
// a retriever once for several callers, but never with another caller's
// width: an approximate backend's top k is not the first k hits of its top
// K > k (HNSW searches with a candidate list of max(efSearch, k)). The
// helpers below let them share work without changing an answer.

// PrefixStabler is implemented by retrievers that know whether their top-k
// list is always the first k hits of their top-K list for K > k (exact
// search with the total order of Hit: BM25, exact flat). A layer may then
// answer a narrow call by cutting a wider one.
type PrefixStabler interface {
	PrefixStable() bool
}

// WidthRetriever is implemented by retrievers that answer a batch whose
// queries ask for different widths in one call (one encoder batch), every
// query as Retrieve([]string{q}, k) would. ks[i] is queries[i]'s width.
type WidthRetriever interface {
	Retriever
	RetrieveWidths(ctx context.Context, queries []string, ks []int) ([][]Hit, error)
}

// PrefixStable reports whether r's top-k lists are prefixes of its wider
// lists: r's own PrefixStable when it has one, else that of the retriever
// it wraps (an Unwrap() Retriever method, as the result cache and the
// batching queue have), else false (unknown: never cut).
func PrefixStable(r Retriever) bool {
	for r != nil {
		if p, ok := r.(PrefixStabler); ok {
			return p.PrefixStable()
		}
		u, ok := r.(interface{ Unwrap() Retriever })
		if !ok {
			return false
		}
		r = u.Unwrap()
	}
	return false
}

// RetrieveWidths answers queries[i] at width ks[i] (len(ks) ==
// len(queries)), every answer as a separate Retrieve of that query at that
// width would give: through r's RetrieveWidths when r is a WidthRetriever;
// in one call at the widest width, cut, when r is prefix-stable; else one
// Retrieve per distinct width (in order of first appearance). Errors: r's,
// and one naming r when it returns the wrong number of lists.
func RetrieveWidths(ctx context.Context, r Retriever, queries []string, ks []int) ([][]Hit, error) {
	if len(ks) != len(queries) {
		return nil, fmt.Errorf("rlsearch: RetrieveWidths: %d widths for %d queries", len(ks), len(queries))
	}
	if len(queries) == 0 {
		return [][]Hit{}, nil
	}
	same := true
	kmax := ks[0]
	for _, k := range ks {
		same = same && k == ks[0]
		kmax = max(kmax, k)
	}
	n := len(queries)
	check := func(got [][]Hit, err error) ([][]Hit, error) {
		if err == nil && len(got) != n {
			err = fmt.Errorf("rlsearch: retriever %s returned %d lists for %d queries", r.Name(), len(got), n)
		}
		return got, err
	}
	if same {
		return check(r.Retrieve(ctx, queries, kmax))
	}
	if w, ok := r.(WidthRetriever); ok {
		return check(w.RetrieveWidths(ctx, queries, ks))
	}
	if PrefixStable(r) {
		got, err := check(r.Retrieve(ctx, queries, kmax))
		if err != nil {
			return nil, err
		}
		for i, k := range ks {
			if len(got[i]) > k {
				got[i] = got[i][:k:k]
			}
		}
		return got, nil
	}
	out := make([][]Hit, len(queries))
	done := map[int]bool{}
	for _, k := range ks {
		if done[k] {
			continue
		}
		done[k] = true
		var qs []string
		var at []int
		for i, ki := range ks {
			if ki == k {
				qs, at = append(qs, queries[i]), append(at, i)
			}
		}
		n = len(qs)
		got, err := check(r.Retrieve(ctx, qs, k))
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			out[i] = got[j]
		}
	}
	return out, nil
}
