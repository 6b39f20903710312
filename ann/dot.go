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
