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
