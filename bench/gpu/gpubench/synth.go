package main

import (
	"encoding/binary"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/ann"
)

// splitmix64 (Steele, Lea, Flood 2014): the generator of row vectors.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unitRow fills v with row's vector: uniform values in [-1, 1) from
// splitmix64 seeded by (seed, row), four 16-bit values per draw, scaled to
// unit length. Directions are not uniform on the sphere (the cube's
// corners weigh more); what the benchmark measures does not depend on it:
// the work is the same, and the threshold filter only needs rows in no
// particular order with respect to the queries.
func unitRow(v []float32, seed uint64, row int) {
	x := seed*0x632be59bd9b4e019 ^ uint64(row)*0x9e3779b97f4a7c15
	var ss float64
	for j := 0; j < len(v); j += 4 {
		r := splitmix64(&x)
		for e := 0; e < 4 && j+e < len(v); e++ {
			f := float32(int16(r>>(16*e))) / 32768
			v[j+e] = f
			ss += float64(f) * float64(f)
		}
	}
	inv := float32(1 / math.Sqrt(max(ss, 1e-30)))
	for j := range v {
		v[j] *= inv
	}
}

// UnitRows streams n generated unit vectors of dim as fp16 blocks of
// 65,536 rows, each block generated on all cores. The first m rows do not
// depend on n.
func UnitRows(n, dim int, seed uint64) ann.RowSource {
	return blockRows(n, 2*dim, func() func(int, []byte) {
		v := make([]float32, dim) // per worker
		return func(row int, dst []byte) {
			unitRow(v, seed, row)
			for j, f := range v {
				binary.LittleEndian.PutUint16(dst[2*j:], toF16(f))
			}
		}
	})
}

// blockRows streams n rows of rowBytes bytes in blocks of 65,536 rows.
// Each block is filled on all cores: every worker gets its own fill
// function from newFill, which writes one row (by index) into dst.
func blockRows(n, rowBytes int, newFill func() func(row int, dst []byte)) ann.RowSource {
	const block = 1 << 16
	lo := 0
	buf := make([]byte, min(block, n)*rowBytes)
	return func() (int, []byte, error) {
		if lo >= n {
			return lo, nil, io.EOF
		}
		hi := min(lo+block, n)
		rows := hi - lo
		var wg sync.WaitGroup
		workers := runtime.GOMAXPROCS(0)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				fill := newFill()
				for r := w; r < rows; r += workers {
					fill(lo+r, buf[r*rowBytes:(r+1)*rowBytes])
				}
			}(w)
		}
		wg.Wait()
		row0 := lo
		lo = hi
		return row0, buf[:rows*rowBytes], nil
	}
}

// unitQueries are nq unit query vectors (seeded; independent of the rows).
func unitQueries(nq, dim int, seed uint64) []float32 {
	q := make([]float32, nq*dim)
	for i := 0; i < nq; i++ {
		unitRow(q[i*dim:(i+1)*dim], seed^0x5bd1e995, -1-i)
	}
	return q
}

// toF16 is float16.Fromfloat32(f).Bits() (round to nearest even) for
// |f| < 65,520, with a fast path for normal results (TestToF16 compares
// them); UnitRows spends most of its time here otherwise.
func toF16(f float32) uint16 {
	x := math.Float32bits(f)
	sign := uint16(x>>16) & 0x8000
	a := x &^ 0x80000000
	if a >= 0x38800000 && a < 0x477ff000 { // result normal (≥ 2^-14, below overflow)
		a += 0x0fff + (a>>13)&1
		return sign | uint16((a-0x38000000)>>13)
	}
	return float16.Fromfloat32(f).Bits()
}

// Int8Header is the header of Int8Rows' corpus: INT8, offset 0 and the one
// scale 1/sqrt(dim·E[c²]) in every dimension, so that a row has unit
// expected squared norm. E[c²] = 1,397,889/256 ≈ 5,460.5 for Int8Rows'
// codes (a uniform byte, with -128 read as -127).
func Int8Header(n, dim int) ann.Header {
	h := ann.Header{DType: ann.INT8, Count: n, Dim: dim, Scale: make([]float32, dim), Offset: make([]float32, dim)}
	s := float32(1 / math.Sqrt(float64(dim)*1397889/256))
	for j := range h.Scale {
		h.Scale[j] = s
	}
	return h
}

// Int8Rows streams n generated rows of int8 codes (uniform in [-127, 127],
// splitmix64 seeded by (seed, row), eight codes per draw) in blocks of
// 65,536 rows, each block generated on all cores: the corpus of the int8
// timings (ann.GPUConfig.Int8). The first m rows do not depend on n.
func Int8Rows(n, dim int, seed uint64) ann.RowSource {
	return blockRows(n, dim, func() func(int, []byte) {
		return func(row int, dst []byte) { int8Row(dst[:dim], seed, row) }
	})
}

// int8Row writes row's codes of Int8Rows into dst (len dim).
func int8Row(dst []byte, seed uint64, row int) {
	dim := len(dst)
	x := seed*0x94d049bb133111eb ^ uint64(row)*0x9e3779b97f4a7c15
	for j := 0; j < dim; j += 8 {
		v := splitmix64(&x)
		for e := 0; e < 8 && j+e < dim; e++ {
			c := byte(v >> (8 * e))
			if c == 0x80 { // -128 → -127: symmetric codes
				c = 0x81
			}
			dst[j+e] = c
		}
	}
}

// canaryRows returns rows [lo, hi) of the loaded corpus widened to
// float32 as the index holds them (ann.SearchCanary's rows): UnitRows'
// vectors rounded to fp16, or Int8Rows' codes times Int8Header's scale.
func canaryRows(dim int, seed uint64, codes8 bool) func(lo, hi int) []float32 {
	scale := Int8Header(1, dim).Scale[0]
	return func(lo, hi int) []float32 {
		out := make([]float32, (hi-lo)*dim)
		codes := make([]byte, dim)
		for r := lo; r < hi; r++ {
			v := out[(r-lo)*dim : (r-lo+1)*dim]
			if codes8 {
				int8Row(codes, seed, r)
				for j, c := range codes {
					v[j] = scale * float32(int8(c))
				}
				continue
			}
			unitRow(v, seed, r)
			for j, f := range v {
				v[j] = float16.Frombits(toF16(f)).Float32()
			}
		}
		return out
	}
}
