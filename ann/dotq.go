package ann

import "math"

// Integer scoring of int8 codes. The graph's traversal on codes computes
// q·x ≈ q·offset + (q∘scale)·c; instead of widening every code to float32
// (three instructions per 8 values), the query side q∘scale is quantised
// once per query to int16, w_j = round(qs_j/α), and each row's score is the
// exact integer Σ_j w_j·c_j, then sim = q·offset + α·Σ. Integer sums do not
// depend on the order of the additions, so the assembly kernels (AVX-512
// VNNI VPDPWSSD, AVX-512BW and AVX2 VPMADDWD) and the pure-Go loop give the
// same bits on every CPU: an answer does not depend on the machine.
//
// Precision: |w_j| ≤ wmax(d) = min(32767, ⌊(2³¹−1)/(128·d)⌋), so that no sum of
// d products |w_j·c_j| ≤ 128·wmax can overflow int32 in any order; at
// d = 768 wmax is 21,845 (relative step 1/43,690 of the largest |qs_j|,
// against the codes' own step of 1/255 of each dimension's range).

// i8Query is one query quantised for integer scoring.
type i8Query struct {
	w     []int16 // [d]
	alpha float32 // qs_j ≈ alpha·w_j
}

// wmax is the largest |w_j| for dimension d (see above).
func wmax(d int) int32 {
	return int32(min(32767, (math.MaxInt32)/(128*max(d, 1))))
}

// quantizeI8Query sets w (len(qs)) to qs quantised to int16 and returns
// alpha; an all-zero qs gives w = 0 and alpha = 0.
func quantizeI8Query(qs []float32, w []int16) float32 {
	// The largest |v| by plain comparisons (NaN never wins one; nan
	// records whether there was one), cheaper than the NaN-propagating
	// builtin max.
	var m float32
	nan := false
	for _, v := range qs {
		a := float32(math.Abs(float64(v)))
		if a > m {
			m = a
		}
		nan = nan || a != a
	}
	w = w[:len(qs)]
	if nan || m == 0 || math.IsInf(float64(m), 0) {
		clear(w)
		return 0
	}
	lim := float64(wmax(len(qs)))
	inv := lim / float64(m)
	for j, v := range qs {
		// Every value is finite here (|v| ≤ m), so plain comparisons
		// clamp as the builtin max and min would.
		r := math.Round(float64(v) * inv)
		if r > lim {
			r = lim
		}
		if r < -lim {
			r = -lim
		}
		w[j] = int16(r)
	}
	return float32(float64(m) / lim)
}

// dotI8Q is Σ_j int32(w_j)·int32(c_j) (len(c) ≥ len(w)).
func dotI8Q(w []int16, c []int8) int32 {
	c = c[:len(w)]
	var s0, s1, s2, s3 int32
	j := 0
	for ; j+4 <= len(w); j += 4 {
		s0 += int32(w[j]) * int32(c[j])
		s1 += int32(w[j+1]) * int32(c[j+1])
		s2 += int32(w[j+2]) * int32(c[j+2])
		s3 += int32(w[j+3]) * int32(c[j+3])
	}
	for ; j < len(w); j++ {
		s0 += int32(w[j]) * int32(c[j])
	}
	return s0 + s1 + s2 + s3
}

// dotRowsI8Q sets out[i] = dotI8Q(w, row ids[i] of codes) for row-major
// codes ([rows, len(w)]); every id must be a valid row. The assembly
// kernels score the rows in one call, prefetching the first lines of every
// listed row up front and row i+1 while row i is scored; results are equal
// to dotI8Q's (exact integers).
func dotRowsI8Q(w []int16, codes []int8, ids []int32, out []int32) {
	if dotRowsI8QAsm != nil && len(w) >= dotRowsI8QWidth {
		checkRows(ids, len(codes)/len(w))
	}
	dotRowsI8QTrusted(w, codes, ids, out)
}

// dotRowsI8QTrusted is dotRowsI8Q without the check that every id is a row
// of codes, for callers whose ids are rows by construction (Flat's scan
// passes 0…n-1 of an n-row tile): an id out of range would make the
// assembly kernels read out of bounds.
func dotRowsI8QTrusted(w []int16, codes []int8, ids []int32, out []int32) {
	d := len(w)
	out = out[:len(ids)]
	n := d &^ (dotRowsI8QWidth - 1)
	if dotRowsI8QAsm == nil || n == 0 || len(ids) == 0 {
		for i, id := range ids {
			out[i] = dotI8Q(w, codes[int(id)*d:(int(id)+1)*d])
		}
		return
	}
	dotRowsI8QAsm(&w[0], &codes[0], &ids[0], len(ids), n, d, &out[0])
	if n < d {
		for i, id := range ids {
			out[i] += dotI8Q(w[n:], codes[int(id)*d+n:(int(id)+1)*d])
		}
	}
}

// dotSeqI8Q sets out[r] = dotI8Q(w, row r of codes) for every row of
// row-major codes ([len(out), len(w)]), the contiguous scan of Flat: four
// rows at a time by dotSeqI8QAsm where the CPU has one (AVX-512 VNNI),
// the rest (and every row elsewhere) by dotRowsI8QTrusted over iota
// (0, 1, …, at least len(out)-1). Exact integers, equal to dotI8Q's.
func dotSeqI8Q(w []int16, codes []int8, iota, out []int32) {
	n, r4 := len(w)&^31, len(out)&^3
	if dotSeqI8QAsm == nil || n == 0 || r4 == 0 {
		dotRowsI8QTrusted(w, codes, iota[:len(out)], out)
		return
	}
	_ = codes[len(out)*len(w)-1]
	dotSeqI8QAsm(&w[0], &codes[0], r4, n, len(w), &out[0])
	seqRest(w, codes, iota, out, n, r4)
}

// dotSeqI8Q2 is dotSeqI8Q for two queries (w → out, w2 → out2, len(w2) =
// len(w), len(out2) = len(out)) in one pass over the rows: each row's
// codes are widened once for both (dotSeqI8Q2Asm). The sums equal two
// dotSeqI8Q calls', so pairing queries never changes an answer.
func dotSeqI8Q2(w, w2 []int16, codes []int8, iota, out, out2 []int32) {
	n, r4 := len(w)&^31, len(out)&^3
	if dotSeqI8Q2Asm == nil || n == 0 || r4 == 0 {
		dotSeqI8Q(w, codes, iota, out)
		dotSeqI8Q(w2, codes, iota, out2)
		return
	}
	_, _, _ = codes[len(out)*len(w)-1], w2[len(w)-1], out2[len(out)-1]
	dotSeqI8Q2Asm(&w[0], &w2[0], &codes[0], r4, n, len(w), &out[0], &out2[0])
	seqRest(w, codes, iota, out, n, r4)
	seqRest(w2, codes, iota, out2, n, r4)
}

// seqRest completes a four-row kernel's pass that covered the first n
// values of rows 0…r4-1: their values past n, then the rows from r4 on.
func seqRest(w []int16, codes []int8, iota, out []int32, n, r4 int) {
	d, rows := len(w), len(out)
	if n < d {
		for r := 0; r < r4; r++ {
			out[r] += dotI8Q(w[n:], codes[r*d+n:(r+1)*d])
		}
	}
	if r4 < rows {
		dotRowsI8QTrusted(w, codes[r4*d:rows*d], iota[:rows-r4], out[r4:])
	}
}

// dotSeqI8QAsm is the four-row contiguous integer kernel (nil: none); it
// covers the first n values (a positive multiple of 32) of rows (a
// positive multiple of 4) rows. dotSeqI8Q2Asm is its two-query form.
var (
	dotSeqI8QAsm  func(w *int16, base *int8, rows, n, stride int, out *int32)
	dotSeqI8Q2Asm func(w, w2 *int16, base *int8, rows, n, stride int, out, out2 *int32)
)

// dotRowsI8QAsm is the fastest integer row kernel on this CPU (nil: none);
// it covers the first n values of each row, n a positive multiple of
// dotRowsI8QWidth. dotRowsI8QName names it ("avx512vnni", "avx512bw",
// "avx2" or "go").
var (
	dotRowsI8QAsm   func(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)
	dotRowsI8QWidth = 32
	dotRowsI8QName  = "go"
)

// scoreI8 converts an integer row score to the similarity the traversal
// uses: qoff + alpha·s, rounded once per operation (the explicit
// conversion keeps the compiler from fusing it into an FMA, so every
// platform gives the same bits).
func scoreI8(qoff, alpha float32, s int32) float32 {
	return qoff + float32(alpha*float32(s))
}

// i8qKernels lists the integer row kernels usable on this CPU, fastest
// last (set once at init; tests run each against dotI8Q).
var i8qKernels []i8qKernel

type i8qKernel struct {
	name  string
	width int
	fn    func(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)
}
