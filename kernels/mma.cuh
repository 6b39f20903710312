// mma.cuh: the tensor-core MMA both nn.cu and scan.cu use (included by
// each; emu.cpp includes both, hence the guard).
#pragma once
#include <stdint.h>

// d += a * b for one warp: a is the 16x16 row-major A fragment, b the
// 16x8 column-major B fragment, d the 16x8 fp32 accumulator, in the
// fragment layouts of PTX ISA "Matrix Fragments for mma.m16n8k16" (lane =
// 4*g + q): a[0] = A[g][2q..2q+1], a[1] = A[g+8][2q..], a[2] = A[g][2q+8..],
// a[3] = A[g+8][2q+8..]; b[0] = B[2q..2q+1][g], b[1] = B[2q+8..2q+9][g];
// d[0..1] = D[g][2q..2q+1], d[2..3] = D[g+8][2q..2q+1]. Low halves hold
// the lower column (a) or row (b) index.
__device__ __forceinline__ void rls_mma16816(float* d, const uint32_t* a, const uint32_t* b) {
#ifdef RLS_EMU
    rls_emu_mma16816(d, a, b);
#else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
