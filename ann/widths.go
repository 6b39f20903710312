package ann

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// Exact reports whether ix returns the exact top k (Flat, GPUFlat, and an
// Opened over either): then a top-k list is the first k hits of any wider
// list, and a caller may answer several widths with one Search at the
// widest and cut. HNSW is approximate: its candidate list is
// max(EfSearch, k), so its top 3 is not the first 3 of its top 1,000; so
// is a Flat through Int8Scan (its candidates are k + extra rows by code
// score). An index of a type this package does not know counts as
// approximate.
func Exact(ix Index) bool {
	if o, ok := ix.(*Opened); ok {
		ix = o.Index
	}
	switch x := ix.(type) {
	case *Flat:
		return x.scan == nil
	case *GPUFlat:
		return true
	}
	return false
}

// SearchWidths searches row i of q ([len(ks), Dim()] row-major) for its
// own ks[i] hits, each list equal to what Search of that row alone at that
// width returns: one Search at the widest width, cut, on an exact index;
// HNSW searches every row with its own width in one parallel pass; any
// other index gets one Search per distinct width. The result is owned by
// the caller. Errors: Search's, and ErrDim when len(q) ≠ len(ks)·Dim().
func SearchWidths(ctx context.Context, ix Index, q []float32, ks []int) ([][]rlsearch.Hit, error) {
	d := ix.Dim()
	if d <= 0 || len(q) != len(ks)*d {
		return nil, fmt.Errorf("%w: ann: SearchWidths: query length %d is not %d widths × dim %d", ErrDim, len(q), len(ks), d)
	}
	if o, ok := ix.(*Opened); ok {
		ix = o.Index
	}
	if h, ok := ix.(*HNSW); ok {
		return h.searchWidths(ctx, q, ks)
	}
	kmax := 0
	for _, k := range ks {
		if k < 0 {
			return nil, fmt.Errorf("%w: ann: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
		}
		kmax = max(kmax, k)
	}
	if f, ok := ix.(*Flat); ok && f.scan != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return f.searchInt8Widths(ctx, q, ks)
	}
	if Exact(ix) {
		out, err := ix.Search(ctx, q, kmax)
		if err != nil {
			return nil, err
		}
		for i, k := range ks {
			if len(out[i]) > k {
				out[i] = out[i][:k:k]
			}
		}
		return out, nil
	}
	out := make([][]rlsearch.Hit, len(ks))
	done := map[int]bool{}
	for _, k := range ks {
		if done[k] {
			continue
		}
		done[k] = true
		var rows []float32
		var at []int
		for i, ki := range ks {
			if ki == k {
				rows, at = append(rows, q[i*d:(i+1)*d]...), append(at, i)
			}
		}
		got, err := ix.Search(ctx, rows, k)
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			out[i] = got[j]
		}
	}
	return out, nil
}
