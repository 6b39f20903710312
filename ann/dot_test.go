package ann

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestDotRowsMatchesDot checks that the many-row kernels (one call per
// adjacency list, with prefetch) give every row's score bit for bit equal
// to the one-row kernels, at awkward dimensions and list lengths, with
// repeated and boundary row ids.
func TestDotRowsMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, d := range []int{1, 3, 15, 16, 17, 31, 32, 33, 48, 64, 127, 128, 384, 768, 784} {
		const rows = 50
		vecs := randVecs(rng, rows, d)
		codes := make([]int8, rows*d)
		for i := range codes {
			codes[i] = int8(rng.Intn(256) - 128)
		}
		q := randVecs(rng, 1, d)
		for _, nids := range []int{0, 1, 2, 7, 32, 33} {
			t.Run(fmt.Sprintf("dim=%d/ids=%d", d, nids), func(t *testing.T) {
				ids := make([]int32, nids)
				for i := range ids {
					ids[i] = int32(rng.Intn(rows))
				}
				if nids > 2 {
					ids[0], ids[1], ids[2] = rows-1, 0, ids[1] // ends of the array and a repeat
				}
				out := make([]float32, nids+1)
				out[nids] = 42 // past the ids: must stay untouched
				dotRowsF32(q, vecs, ids, out)
				for i, id := range ids {
					if want := dotF32(q, vecs[int(id)*d:(int(id)+1)*d]); out[i] != want {
						t.Errorf("f32 row %d (id %d) = %v, dotF32 %v", i, id, out[i], want)
					}
				}
				if out[nids] != 42 {
					t.Errorf("f32 wrote past the ids: %v", out[nids])
				}
				w := make([]int16, d)
				quantizeI8Query(q, w)
				iout := make([]int32, nids+1)
				iout[nids] = 42
				dotRowsI8Q(w, codes, ids, iout)
				for i, id := range ids {
					if want := dotI8Q(w, codes[int(id)*d:(int(id)+1)*d]); iout[i] != want {
						t.Errorf("int8 row %d (id %d) = %v, dotI8Q %v", i, id, iout[i], want)
					}
				}
				if iout[nids] != 42 {
					t.Errorf("int8 wrote past the ids: %v", iout[nids])
				}
			})
		}
	}
}

// TestFlatBatch1MatchesBatch checks that a query searched alone (the
// single-query kernels reading fp32/fp16 rows in place) gets exactly the
// rows and float32 scores it gets inside a batch (the 4-query tile
// kernel), for every kernel, at awkward dimensions and row counts.
func TestFlatBatch1MatchesBatch(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, d := range []int{1, 3, 16, 31, 33, 64, 768, 784} {
		for _, n := range []int{1, 5, 6, 7, 100, 1000} {
			vecs := randVecs(rng, n, d)
			q := randVecs(rng, 5, d)
			for _, dt := range []DType{FP32, FP16, INT8} {
				f, _ := NewFlat(vecs, d, dt)
				for _, kern := range tileKernels {
					f.kernel = kern
					t.Run(fmt.Sprintf("dim=%d/n=%d/%v/%s", d, n, dt, kern.name), func(t *testing.T) {
						batch, _ := f.Search(t.Context(), q, 10)
						for i := range 5 {
							one, _ := f.Search(t.Context(), q[i*d:(i+1)*d], 10)
							if fmt.Sprint(one[0]) != fmt.Sprint(batch[i]) {
								t.Fatalf("query %d alone %v, in a batch of 5 %v", i, one[0], batch[i])
							}
						}
					})
				}
			}
		}
	}
}

// TestDotRowsF16MatchesDot checks the fp16 re-rank kernel against dotF32 of
// the widened rows, bit for bit.
func TestDotRowsF16MatchesDot(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, d := range []int{1, 15, 16, 17, 31, 32, 33, 48, 128, 768, 784} {
		const rows = 40
		vecs := randVecs(rng, rows, d)
		bits := make([]uint16, rows*d)
		encodeF16(bits, vecs)
		q := randVecs(rng, 1, d)
		ids := []int32{rows - 1, 0, 5, 5, 17}
		out := make([]float32, len(ids))
		dotRowsF16(q, bits, ids, out)
		w := make([]float32, d)
		for i, id := range ids {
			for j, b := range bits[int(id)*d : (int(id)+1)*d] {
				w[j] = f16table[b]
			}
			if want := dotF32(q, w); out[i] != want {
				t.Errorf("dim %d row %d: %v, dotF32 of the widened row %v", d, id, out[i], want)
			}
		}
	}
}
