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

// dotI8 is the inner product of float32 a and int8 codes c.
func dotI8(a []float32, c []int8) float32 {
	if dotI8Asm != nil && len(a) >= 16 {
		n := len(a) &^ 15
		s := dotI8Asm(&a[0], &c[0], n)
		for i := n; i < len(a); i++ {
			s += a[i] * float32(c[i])
		}
		return s
	}
	c = c[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(c[i])
		s1 += a[i+1] * float32(c[i+1])
		s2 += a[i+2] * float32(c[i+2])
		s3 += a[i+3] * float32(c[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(c[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotAsm and dotI8Asm are the AVX2+FMA kernels (n a positive multiple of
// 16), nil where unavailable.
var (
	dotAsm   func(a, b *float32, n int) float32
	dotI8Asm func(a *float32, c *int8, n int) float32
)

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

// dotRowsI8 sets out[i] = dotI8(q, row ids[i] of codes) for the rows of
// row-major codes ([rows, len(q)]), as dotRowsF32.
func dotRowsI8(q []float32, codes []int8, ids []int32, out []float32) {
	d := len(q)
	out = out[:len(ids)]
	if dotRowsI8Asm == nil || d < 16 || len(ids) == 0 {
		for i, id := range ids {
			out[i] = dotI8(q, codes[int(id)*d:(int(id)+1)*d])
		}
		return
	}
	checkRows(ids, len(codes)/d)
	n := d &^ 15
	dotRowsI8Asm(&q[0], &codes[0], &ids[0], len(ids), n, d, &out[0])
	if n < d {
		for i, id := range ids {
			c := codes[int(id)*d : (int(id)+1)*d]
			s := out[i]
			for j := n; j < d; j++ {
				s += q[j] * float32(c[j])
			}
			out[i] = s
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
		if id < 0 || int(id) >= rows {
			panic("ann: internal error: row id out of range")
		}
	}
}

// dotRowsAsm and dotRowsI8Asm score many rows in one call (the AVX2+FMA
// kernels; the byte/value count is a positive multiple of 64 bytes / 16
// values; stride in bytes), nil where unavailable.
var (
	dotRowsAsm   func(q, base *float32, ids *int32, nids, dbytes, stride int, out *float32)
	dotRowsI8Asm func(q *float32, base *int8, ids *int32, nids, n, stride int, out *float32)
	// dotRowsF16Asm: fp16 rows (n values, a positive multiple of 16).
	dotRowsF16Asm func(q *float32, base *uint16, ids *int32, nids, n, stride int, out *float32)
)
