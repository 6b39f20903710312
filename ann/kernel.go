package ann

// tileKernel scores a block of 4 queries against a tile of shard rows. The
// pure-Go kernel is always available; amd64 adds AVX2+FMA (4 queries × 3
// rows, 8 lanes) and AVX-512F (4 × 6, 16 lanes) assembly kernels, chosen at
// run time from golang.org/x/sys/cpu (build tag purego disables them).
type tileKernel struct {
	name  string
	rows  int // rows scored per kernel step; tiles are padded to a multiple
	width int // floats per vector step; the d % width tail is added in Go
	asm   func(q *float32, qs uintptr, x *float32, xs uintptr, dbytes uintptr, steps uintptr, out *float32)
	// q1f32 and q1f16, when set, score one query against rows read in place
	// (fp32 or fp16 storage) with asm's arithmetic for query 0: out[r] is
	// bit for bit what asm would put at out[4r] (batch 1 without padding
	// the query block or widening the tile). nil: batch 1 uses asm.
	q1f32 func(q *float32, x *float32, xs uintptr, dbytes uintptr, steps uintptr, out *float32)
	q1f16 func(q *float32, x *uint16, xs uintptr, dbytes uintptr, steps uintptr, out *float32)
}

var goKernel = &tileKernel{name: "go", rows: 1, width: 1}

// tileKernels lists every kernel usable on this CPU, the pure-Go one first;
// defaultKernel is the fastest. Both are set once at init and never change.
var (
	tileKernels   = []*tileKernel{goKernel}
	defaultKernel = goKernel
)

// KernelName reports the tile kernel Flat uses on this CPU: "avx512",
// "avx2" or "go".
func KernelName() string { return defaultKernel.name }

// score computes out[r*4+j] = q_j · tile_r for 4 queries q ([4, d]) and
// rows r < rows of tile ([rows, d], rows a multiple of k.rows).
func (k *tileKernel) score(q []float32, tile []float32, rows, d int, out []float32) {
	dv := 0
	if k.asm != nil {
		dv = d / k.width * k.width
	}
	if dv > 0 {
		k.callAsm(q, tile, rows, d, dv, out)
		if dv == d {
			return
		}
		q0, q1, q2, q3 := q[dv:d], q[d+dv:2*d], q[2*d+dv:3*d], q[3*d+dv:4*d]
		for r := 0; r < rows; r++ {
			s0, s1, s2, s3 := dot4(q0, q1, q2, q3, tile[r*d+dv:(r+1)*d])
			out[4*r] += s0
			out[4*r+1] += s1
			out[4*r+2] += s2
			out[4*r+3] += s3
		}
		return
	}
	q0, q1, q2, q3 := q[:d], q[d:2*d], q[2*d:3*d], q[3*d:4*d]
	for r := 0; r < rows; r++ {
		out[4*r], out[4*r+1], out[4*r+2], out[4*r+3] = dot4(q0, q1, q2, q3, tile[r*d:(r+1)*d])
	}
}

// scoreQ1 computes out[r] = q · row r for one query q ([d]) and rows r <
// rows (a multiple of k.rows) of f's storage from row lo, in place, when
// k has a single-query kernel for f's dtype; bit for bit score's out[4r]
// for q in query slot 0. It reports false (out untouched) otherwise.
func (k *tileKernel) scoreQ1(q []float32, f *Flat, lo, rows int, out []float32) bool {
	d := f.h.Dim
	dv := d / k.width * k.width
	if dv == 0 || rows == 0 {
		return false
	}
	switch {
	case f.f32 != nil && k.q1f32 != nil:
		x := f.f32[lo*d : (lo+rows)*d]
		_ = out[rows-1]
		k.q1f32(&q[0], &x[0], uintptr(4*d), uintptr(4*dv), uintptr(rows/k.rows), &out[0])
		if dv < d {
			for r := 0; r < rows; r++ {
				t := x[r*d+dv : (r+1)*d]
				s, _, _, _ := dot4(q[dv:d], q[dv:d], q[dv:d], q[dv:d], t)
				out[r] += s
			}
		}
	case f.f16 != nil && k.q1f16 != nil:
		x := f.f16[lo*d : (lo+rows)*d]
		_ = out[rows-1]
		k.q1f16(&q[0], &x[0], uintptr(2*d), uintptr(4*dv), uintptr(rows/k.rows), &out[0])
		if dv < d {
			var buf [16]float32
			for r := 0; r < rows; r++ {
				t := buf[:d-dv]
				for j := range t {
					t[j] = f16table[x[r*d+dv+j]]
				}
				s, _, _, _ := dot4(q[dv:d], q[dv:d], q[dv:d], q[dv:d], t)
				out[r] += s
			}
		}
	default:
		return false
	}
	return true
}
