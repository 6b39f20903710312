package ann

import "math"

// Int8Range accumulates per-dimension minima and maxima over vectors seen
// in chunks, so that int8 scales can be fitted in a streaming first pass
// over a file larger than memory (`rlsearch index --vectors`). Fit gives
// exactly what FitInt8 gives over the concatenation of the chunks. It is
// not safe for concurrent use.
type Int8Range struct {
	lo, hi []float32
}

// NewInt8Range starts an empty range over dim dimensions (dim ≥ 1).
func NewInt8Range(dim int) *Int8Range {
	r := &Int8Range{lo: make([]float32, dim), hi: make([]float32, dim)}
	for j := range r.lo {
		r.lo[j], r.hi[j] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	return r
}

// Add widens the range by row-major [n, dim] vecs (len(vecs) a multiple
// of dim).
func (r *Int8Range) Add(vecs []float32) {
	d := len(r.lo)
	for i := 0; i+d <= len(vecs); i += d {
		row := vecs[i : i+d]
		for j, v := range row {
			r.lo[j] = min(r.lo[j], v)
			r.hi[j] = max(r.hi[j], v)
		}
	}
}

// Fit returns the scale and offset ([dim] each, FORMAT.md): scale_j =
// (max_j − min_j)/255, offset_j = min_j + 128·scale_j; zero for a
// dimension never seen.
func (r *Int8Range) Fit() (scale, offset []float32) {
	scale = make([]float32, len(r.lo))
	offset = make([]float32, len(r.lo))
	for j := range scale {
		lo, hi := r.lo[j], r.hi[j]
		if lo > hi { // no rows
			lo, hi = 0, 0
		}
		scale[j] = (hi - lo) / 255
		offset[j] = lo + 128*scale[j]
	}
	return scale, offset
}
