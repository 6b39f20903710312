package ann

// dotF32 is the inner product of two equal-length float32 vectors.
func dotF32(a, b []float32) float32 {
	if dotAsm != nil && len(a) >= 16 {
		n := len(a) &^ 15
		s := dotAsm(&a[0], &b[0], n)
		if n < len(a) {
			s += dot(a[n:], b[n:len(a)])
		}
		return s
	}
	return dot(a, b)
}

// dotAsm is the AVX2+FMA kernel (n a positive multiple of 16), nil where
// unavailable.
var dotAsm func(a, b *float32, n int) float32

// dotRowsF32 sets out[i] = dotF32(q, row ids[i] of vecs) for the rows of
// row-major vecs ([rows, len(q)]); every id must be a valid row. With the
// assembly kernel the rows are scored in one call that prefetches row i+1
// while it scores row i; each result equals dotF32's bit for bit.
func dotRowsF32(q, vecs []float32, ids []int32, out []float32) {
	d := len(q)
	out = out[:len(ids)]
	if dotRowsAsm == nil || d < 16 || len(ids) == 0 {
		for i, id := range ids {
			out[i] = dotF32(q, vecs[int(id)*d:(int(id)+1)*d])
		}
		return
	}
	checkRows(ids, len(vecs)/d)
	n := d &^ 15
	dotRowsAsm(&q[0], &vecs[0], &ids[0], len(ids), 4*n, 4*d, &out[0])
	if n < d {
		for i, id := range ids {
			out[i] += dot(q[n:], vecs[int(id)*d+n:(int(id)+1)*d])
		}
	}
}

// dotRowsF16 sets out[i] = dotF32(q, float32(row ids[i] of rows)) for the
// rows of row-major fp16 bits ([rows, len(q)]), converting in registers
// where F16C is available; each result equals dotF32 of q and the widened
// row bit for bit.
func dotRowsF16(q []float32, rows []uint16, ids []int32, out []float32) {
	d := len(q)
	out = out[:len(ids)]
	if dotRowsF16Asm == nil || d < 16 || len(ids) == 0 {
		buf := make([]float32, d)
		for i, id := range ids {
			for j, b := range rows[int(id)*d : (int(id)+1)*d] {
				buf[j] = f16table[b]
			}
			out[i] = dotF32(q, buf)
		}
		return
	}
	checkRows(ids, len(rows)/d)
	n := d &^ 15
	dotRowsF16Asm(&q[0], &rows[0], &ids[0], len(ids), n, 2*d, &out[0])
	if n < d {
		var buf [15]float32
		for i, id := range ids {
			t := buf[:d-n]
			for j, b := range rows[int(id)*d+n : (int(id)+1)*d] {
				t[j] = f16table[b]
			}
			out[i] += dot(q[n:], t)
		}
	}
}

// checkRows panics (an internal bug: ids come from the graph) when an id is
// outside [0, rows), before an assembly kernel reads it.
func checkRows(ids []int32, rows int) {
	for _, id := range ids {
		if uint(id) >= uint(rows) { // negative ids wrap to above rows
			panic("ann: internal error: row id out of range")
		}
	}
}

// dotRowsAsm scores many rows in one call (the AVX2+FMA kernel; the byte
// count is a positive multiple of 64; stride in bytes), nil where
// unavailable.
var (
	dotRowsAsm func(q, base *float32, ids *int32, nids, dbytes, stride int, out *float32)
	// dotRowsF16Asm: fp16 rows (n values, a positive multiple of 16).
	dotRowsF16Asm func(q *float32, base *uint16, ids *int32, nids, n, stride int, out *float32)
)
