package transformer

import (
	"math"
	"runtime"
	"sync"
)

// Building blocks of the float32 reference forward passes (BertRef,
// Qwen3Ref). Plain loops, parallel over rows; accumulation in float32 with
// four partial sums for dot products, float64 for norms and softmax sums.

// dot is a·b over len(a) float32s.
func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a)
	b = b[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// linear returns y = x·Wᵀ + b for x [rows, in], W [out, in] (a Hugging
// Face Linear weight), b [out] or nil.
func linear(x []float32, rows, in int, w []float32, out int, b []float32) []float32 {
	y := make([]float32, rows*out)
	parallelRows(rows*out, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			r, o := e/out, e%out
			v := dot(x[r*in:(r+1)*in], w[o*in:(o+1)*in])
			if b != nil {
				v += b[o]
			}
			y[e] = v
		}
	})
	return y
}

// parallelRows splits [0, n) work items over GOMAXPROCS goroutines.
func parallelRows(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if n < 4096 || w == 1 {
		fn(0, n)
		return
	}
	per := (n + w - 1) / w
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// layerNormRows applies LayerNorm (biased variance, eps inside the square
// root; torch.nn.LayerNorm) to each row of x in place.
func layerNormRows(x []float32, h int, g, b []float32, eps float64) {
	for r := 0; r+h <= len(x); r += h {
		row := x[r : r+h]
		var mean, q float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(h)
		for _, v := range row {
			d := float64(v) - mean
			q += d * d
		}
		rstd := 1 / math.Sqrt(q/float64(h)+eps)
		for i, v := range row {
			row[i] = float32((float64(v)-mean)*rstd)*g[i] + b[i]
		}
	}
}

// rmsNorm returns x·rsqrt(mean(x²) + eps)·g for one row (Qwen3RMSNorm).
func rmsNorm(dst, x, g []float32, eps float64) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	k := float32(1 / math.Sqrt(ss/float64(len(x))+eps))
	for i, v := range x {
		dst[i] = v * k * g[i]
	}
}

// attend computes softmax(scale·q·kᵀ)·v for one head: q [lq, d] at
// positions qpos (causal: key j visible from query i when j <= qpos[i]),
// k and v [lk, d] row-strided by ld (elements), out [lq, d] strided by ldo.
func attend(q []float32, ldq int, k, v []float32, ldk int, lq, lk, d int, scale float32, causal bool, qpos []int, out []float32, ldo int) {
	w := make([]float64, lk)
	acc := make([]float64, d)
	for i := 0; i < lq; i++ {
		end := lk
		if causal {
			end = qpos[i] + 1
		}
		m := math.Inf(-1)
		qi := q[i*ldq : i*ldq+d]
		for j := 0; j < end; j++ {
			w[j] = float64(dot(qi, k[j*ldk:j*ldk+d]) * scale)
			m = max(m, w[j])
		}
		var z float64
		for j := 0; j < end; j++ {
			w[j] = math.Exp(w[j] - m)
			z += w[j]
		}
		clear(acc)
		for j := 0; j < end; j++ {
			p := w[j] / z
			for c, x := range v[j*ldk : j*ldk+d] {
				acc[c] += p * float64(x)
			}
		}
		for c, x := range acc {
			out[i*ldo+c] = float32(x)
		}
	}
}
