package cuda_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

func TestGemmValidate(t *testing.T) {
	ok := cuda.GemmArgs{TransA: true, M: 4, N: 3, K: 5, A: 1, Lda: 5, B: 1, Ldb: 5, C: 1, Ldc: 4}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]cuda.GemmArgs{
		"zero k":    {TransA: true, M: 4, N: 3, K: 0, A: 1, Lda: 5, B: 1, Ldb: 5, C: 1, Ldc: 4},
		"short lda": {TransA: true, M: 4, N: 3, K: 5, A: 1, Lda: 4, B: 1, Ldb: 5, C: 1, Ldc: 4},
		"short ldc": {TransA: true, M: 4, N: 3, K: 5, A: 1, Lda: 5, B: 1, Ldb: 5, C: 1, Ldc: 3},
		"null C":    {TransA: true, M: 4, N: 3, K: 5, A: 1, Lda: 5, B: 1, Ldb: 5, Ldc: 4},
	} {
		if err := g.Validate(); !errors.Is(err, cuda.ErrBadArg) {
			t.Errorf("%s: %v, want ErrBadArg", name, err)
		}
	}
}

// TestGemmGPU: cuBLAS computes the row-major Y = X·Wᵀ the transformer
// forward passes use (TransA, fp16 in), with fp16 output and with fp32
// output accumulated onto (beta 1), at awkward sizes.
func TestGemmGPU(t *testing.T) {
	dev := cudatest.Device(t)
	r := rand.New(rand.NewPCG(1, 2))
	err := dev.Do(func(c *cuda.Ctx) error {
		for _, sz := range []struct{ rows, in, out int }{{1, 1, 1}, {3, 31, 33}, {257, 768, 2304}, {64, 3072, 768}} {
			x := make([]float32, sz.rows*sz.in)
			w := make([]float32, sz.out*sz.in)
			acc := make([]float32, sz.rows*sz.out)
			for i := range x {
				x[i] = float16.Fromfloat32(float32(r.NormFloat64())).Float32()
			}
			for i := range w {
				w[i] = float16.Fromfloat32(float32(r.NormFloat64() * 0.05)).Float32()
			}
			for i := range acc {
				acc[i] = float32(r.NormFloat64())
			}
			up := func(v []float32, half bool) *cuda.Buffer {
				var b []byte
				if half {
					b = make([]byte, 2*len(v))
					for i, f := range v {
						binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(f).Bits())
					}
				} else {
					b = make([]byte, 4*len(v))
					for i, f := range v {
						binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
					}
				}
				buf, err := c.Alloc(int64(len(b)))
				if err != nil {
					t.Fatal(err)
				}
				if err := c.CopyHtoD(buf, 0, b); err != nil {
					t.Fatal(err)
				}
				return buf
			}
			xb, wb, yb, ab := up(x, true), up(w, true), up(make([]float32, sz.rows*sz.out), true), up(acc, false)
			g := cuda.GemmArgs{TransA: true, M: sz.out, N: sz.rows, K: sz.in, Alpha: 1, A: wb.Ptr(0), Lda: sz.in, B: xb.Ptr(0), Ldb: sz.in, C: yb.Ptr(0), Ldc: sz.out, CHalf: true}
			if err := c.Gemm(nil, g); err != nil {
				return err
			}
			g.C, g.CHalf, g.Beta = ab.Ptr(0), false, 1
			if err := c.Gemm(nil, g); err != nil {
				return err
			}
			yh := make([]byte, 2*sz.rows*sz.out)
			af := make([]byte, 4*sz.rows*sz.out)
			if err := c.CopyDtoH(yh, yb, 0); err != nil {
				return err
			}
			if err := c.CopyDtoH(af, ab, 0); err != nil {
				return err
			}
			for i := 0; i < sz.rows; i++ {
				for o := 0; o < sz.out; o++ {
					var s float64
					for k := 0; k < sz.in; k++ {
						s += float64(x[i*sz.in+k]) * float64(w[o*sz.in+k])
					}
					e := i*sz.out + o
					gh := float64(float16.Frombits(binary.LittleEndian.Uint16(yh[2*e:])).Float32())
					gf := float64(math.Float32frombits(binary.LittleEndian.Uint32(af[4*e:])))
					tol := 1e-3 * (1 + math.Abs(s))
					if math.Abs(gh-s) > tol || math.Abs(gf-(s+float64(acc[e]))) > tol {
						t.Fatalf("%+v: Y[%d][%d] fp16 %v, fp32+acc %v, want %v (+%v)", sz, i, o, gh, gf, s, acc[e])
					}
				}
			}
			for _, b := range []*cuda.Buffer{xb, wb, yb, ab} {
				b.Close()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAcquire: holders of one ordinal share a Device; without a GPU the
// error matches ErrNoDevice.
func TestAcquire(t *testing.T) {
	a, relA, err := cuda.Acquire(0)
	if err != nil {
		cudatest.Skip(t, err)
	}
	b, relB, err := cuda.Acquire(0)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("two Acquire(0) returned different Devices")
	}
	relA()
	relA() // idempotent
	if err := b.Do(func(*cuda.Ctx) error { return nil }); err != nil {
		t.Fatalf("device closed while still held: %v", err)
	}
	relB()
	if err := b.Do(func(*cuda.Ctx) error { return nil }); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("device open after the last release: %v", err)
	}
}
