package cuda

import (
	"fmt"
	"math"
	"unsafe"
)

// GemmArgs is one cublasGemmEx call in cuBLAS's column-major convention:
// C = Alpha·op(A)·op(B) + Beta·C with op(A) M×K, op(B) K×N, C M×N; A and B
// fp16, fp32 accumulation (CUBLAS_COMPUTE_32F), C fp32 or, with CHalf, fp16.
// With Beta == 0, C is only written. Leading dimensions are in elements.
//
// A row-major activation X [T, K] times a row-major (Hugging Face Linear)
// weight W [N, K] transposed, Y = X·Wᵀ [T, N], is
// GemmArgs{TransA: true, M: N, N: T, K: K, A: W, Lda: K, B: X, Ldb: K, C: Y, Ldc: N}.
type GemmArgs struct {
	TransA, TransB bool
	M, N, K        int
	Alpha          float32
	A              DevPtr
	Lda            int
	B              DevPtr
	Ldb            int
	Beta           float32
	C              DevPtr
	Ldc            int
	CHalf          bool
}

// Validate reports sizes cuBLAS would refuse (CUBLAS_STATUS_INVALID_VALUE).
func (g GemmArgs) Validate() error {
	rowsA, rowsB := g.M, g.K
	if g.TransA {
		rowsA = g.K
	}
	if g.TransB {
		rowsB = g.N
	}
	switch {
	case g.M <= 0 || g.N <= 0 || g.K <= 0 || g.M > math.MaxInt32 || g.N > math.MaxInt32 || g.K > math.MaxInt32:
		return fmt.Errorf("%w: gemm m=%d n=%d k=%d", ErrBadArg, g.M, g.N, g.K)
	case g.Lda < rowsA || g.Ldb < rowsB || g.Ldc < g.M:
		return fmt.Errorf("%w: gemm leading dimensions lda=%d ldb=%d ldc=%d below %d, %d, %d", ErrBadArg, g.Lda, g.Ldb, g.Ldc, rowsA, rowsB, g.M)
	case g.A == 0 || g.B == 0 || g.C == 0:
		return fmt.Errorf("%w: gemm with a null matrix", ErrBadArg)
	}
	return nil
}

// Gemm runs g on stream s (cublasGemmEx; the handle is created on first
// use and bound to s for the call). Errors: ErrBadArg, ErrNoCUBLAS, *Error.
func (c *Ctx) Gemm(s *Stream, g GemmArgs) error {
	if err := g.Validate(); err != nil {
		return err
	}
	bl, err := loadBLAS()
	if err != nil {
		return err
	}
	if c.blas == 0 {
		var h uintptr
		if err := blasCheck("cublasCreate_v2", call(bl.create, uintptr(unsafe.Pointer(&h)))); err != nil {
			return err
		}
		c.blas = h
	}
	if err := blasCheck("cublasSetStream_v2", call(bl.setStream, c.blas, streamHandle(s))); err != nil {
		return err
	}
	op := func(t bool) uintptr {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	ct := uintptr(cudaR32F)
	if g.CHalf {
		ct = cudaR16F
	}
	ab := [2]float32{g.Alpha, g.Beta}
	algo := int32(cublasGemmDflt)
	return blasCheck("cublasGemmEx", call(bl.gemmEx, c.blas, op(g.TransA), op(g.TransB), uintptr(g.M), uintptr(g.N), uintptr(g.K),
		uintptr(unsafe.Pointer(&ab[0])), uintptr(g.A), cudaR16F, uintptr(g.Lda), uintptr(g.B), cudaR16F, uintptr(g.Ldb),
		uintptr(unsafe.Pointer(&ab[1])), uintptr(g.C), ct, uintptr(g.Ldc), cublasCompute32F, uintptr(uint32(algo))))
}
