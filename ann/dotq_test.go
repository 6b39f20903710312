package ann

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDotRowsI8QKernels checks every integer row kernel on this CPU, the
// dispatching dotRowsI8Q and the contiguous dotSeqI8Q and dotSeqI8Q2
// (four-row kernels for one and two queries, plus remainder), against the pure-Go dotI8Q: exact equality
// (integer sums), for dims below, at and past each kernel's width, codes
// at the int8 extremes and w at ±wmax.
func TestDotRowsI8QKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 16, 31, 32, 33, 48, 63, 64, 65, 112, 128, 176, 768, 784, 1000, 4096} {
		rows := 37
		codes := make([]int8, rows*d)
		for i := range codes {
			switch rng.IntN(8) {
			case 0:
				codes[i] = -128
			case 1:
				codes[i] = 127
			default:
				codes[i] = int8(rng.IntN(256) - 128)
			}
		}
		w := make([]int16, d)
		lim := wmax(d)
		for j := range w {
			switch rng.IntN(6) {
			case 0:
				w[j] = int16(lim)
			case 1:
				w[j] = int16(-lim)
			default:
				w[j] = int16(rng.Int32N(2*lim+1) - lim)
			}
		}
		ids := []int32{5, 0, 36, 5, 17, 2, 2, 30}
		want := make([]int32, len(ids))
		for i, id := range ids {
			want[i] = dotI8Q(w, codes[int(id)*d:(int(id)+1)*d])
			var ref int64
			for j := 0; j < d; j++ {
				ref += int64(w[j]) * int64(codes[int(id)*d+j])
			}
			if int64(want[i]) != ref {
				t.Fatalf("d %d: dotI8Q %d, int64 reference %d (overflow?)", d, want[i], ref)
			}
		}
		got := make([]int32, len(ids))
		dotRowsI8Q(w, codes, ids, got)
		for i := range ids {
			if got[i] != want[i] {
				t.Errorf("d %d dotRowsI8Q (%s) row %d = %d, want %d", d, dotRowsI8QName, i, got[i], want[i])
			}
		}
		for _, rows := range []int{1, 3, 4, 5, 8, 37} {
			iota := make([]int32, rows)
			for r := range iota {
				iota[r] = int32(r)
			}
			seq, pair, pair2 := make([]int32, rows), make([]int32, rows), make([]int32, rows)
			w2 := make([]int16, d)
			for j := range w2 {
				w2[j] = -w[d-1-j]
			}
			dotSeqI8Q(w, codes[:rows*d], iota, seq)
			dotSeqI8Q2(w, w2, codes[:rows*d], iota, pair, pair2)
			for r := range seq {
				if wantR := dotI8Q(w, codes[r*d:(r+1)*d]); seq[r] != wantR || pair[r] != wantR {
					t.Errorf("d %d dotSeqI8Q / dotSeqI8Q2 (asm %v) %d rows: row %d = %d / %d, want %d", d, dotSeqI8QAsm != nil, rows, r, seq[r], pair[r], wantR)
				}
				if want2 := dotI8Q(w2, codes[r*d:(r+1)*d]); pair2[r] != want2 {
					t.Errorf("d %d dotSeqI8Q2 second query, %d rows: row %d = %d, want %d", d, rows, r, pair2[r], want2)
				}
			}
		}
		for _, k := range i8qKernels {
			n := d &^ (k.width - 1)
			if n == 0 {
				continue
			}
			out := make([]int32, len(ids))
			k.fn(&w[0], &codes[0], &ids[0], len(ids), n, d, &out[0])
			for i, id := range ids {
				if wantN := dotI8Q(w[:n], codes[int(id)*d:]); out[i] != wantN {
					t.Errorf("d %d kernel %s row %d = %d, want %d", d, k.name, i, out[i], wantN)
				}
			}
		}
	}
	t.Logf("integer row kernels here: %d, dispatch %s", len(i8qKernels), dotRowsI8QName)
}

// TestQuantizeI8Query: w is within wmax, alpha·w is within alpha/2 of qs,
// and degenerate queries (zero, NaN, Inf) give w = 0 without panicking.
func TestQuantizeI8Query(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 3, 768, 20000} {
		qs := make([]float32, d)
		for j := range qs {
			qs[j] = float32(rng.NormFloat64()) * 0.01
		}
		w := make([]int16, d)
		alpha := quantizeI8Query(qs, w)
		lim := wmax(d)
		for j, v := range qs {
			if int32(w[j]) > lim || int32(w[j]) < -lim {
				t.Fatalf("d %d: w[%d] = %d outside ±%d", d, j, w[j], lim)
			}
			if e := math.Abs(float64(alpha)*float64(w[j]) - float64(v)); e > float64(alpha)*0.5001 {
				t.Fatalf("d %d: |alpha·w − qs| at %d = %g > alpha/2 (%g)", d, j, e, alpha/2)
			}
		}
	}
	// The same values as the first form of the quantiser (builtin
	// NaN-propagating max and min), on ties, signed zeros and extremes.
	ref := func(qs []float32, w []int16) float32 {
		var m float32
		for _, v := range qs {
			m = max(m, float32(math.Abs(float64(v))))
		}
		if m == 0 || math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
			clear(w)
			return 0
		}
		lim := float64(wmax(len(qs)))
		inv := lim / float64(m)
		for j, v := range qs {
			w[j] = int16(max(-lim, min(lim, math.Round(float64(v)*inv))))
		}
		return float32(float64(m) / lim)
	}
	for trial := 0; trial < 2000; trial++ {
		d := 1 + rng.IntN(70)
		qs := make([]float32, d)
		for j := range qs {
			switch rng.IntN(6) {
			case 0:
				qs[j] = float32(rng.IntN(9)-4) * 0.5
			case 1:
				qs[j] = float32(math.Copysign(0, -1))
			case 2:
				qs[j] = float32(rng.NormFloat64()) * 1e30
			default:
				qs[j] = float32(rng.NormFloat64())
			}
		}
		if trial%50 == 0 {
			qs[rng.IntN(d)] = float32(math.NaN())
		}
		w, wr := make([]int16, d), make([]int16, d)
		if a, ar := quantizeI8Query(qs, w), ref(qs, wr); math.Float32bits(a) != math.Float32bits(ar) || !slices.Equal(w, wr) {
			t.Fatalf("quantizeI8Query(%v) = %v %v, first form %v %v", qs, a, w, ar, wr)
		}
	}
	for _, bad := range [][]float32{{0, 0, 0}, {float32(math.NaN()), 1, 2}, {float32(math.Inf(1)), 1}} {
		w := []int16{9, 9, 9}
		if a := quantizeI8Query(bad, w[:len(bad)]); a != 0 || w[0] != 0 {
			t.Errorf("quantizeI8Query(%v) = %v, w %v: want 0 and zeros", bad, a, w)
		}
	}
}
