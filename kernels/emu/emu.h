// emu.h: what kernels/nn.cu and kernels/scan.cu need from CUDA, for running them on the CPU
// (tests on machines without a GPU). Included before nn.cu by emu.cpp,
// with this directory on the include path so that <cuda_fp16.h> is the
// stand-in beside this file. See README.md. Not production code.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>

#define RLS_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Blocks run one after another, so one static array per __shared__
// declaration is the block's shared memory (it keeps the previous block's
// contents, as uninitialised shared memory may on a GPU).
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
    unsigned x, y, z;
};
// Set by the scheduler before it resumes each emulated thread.
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

using std::max;
using std::min;

inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}
inline float __int_as_float(unsigned i) { return __int_as_float((int)i); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

// Barriers and warp collectives (emu.cpp). Each yields to the scheduler.
void __syncthreads();
float __shfl_xor_sync(unsigned mask, float v, int laneMask);
int __shfl_xor_sync(unsigned mask, int v, int laneMask);
void rls_emu_mma16816(float* d, const uint32_t* a, const uint32_t* b);

// What scan.cu needs besides (kernels/scan.cu under RLS_EMU).
struct alignas(8) uint2 {
    unsigned x, y;
};
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
// __byte_perm(x, y, s): byte n of the result is byte (s >> 4n) & 7 of the
// 8 bytes y:x (x bytes 0-3), its sign replicated when bit 3 of that
// nibble is set (PTX prmt, default mode).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const uint64_t v = ((uint64_t)y << 32) | x;
    unsigned r = 0;
    for (int n = 0; n < 4; n++) {
        const unsigned sel = (s >> (4 * n)) & 15u;
        unsigned b = (unsigned)(v >> (8 * (sel & 7u))) & 0xffu;
        if (sel & 8u) b = (b & 0x80u) ? 0xffu : 0u;
        r |= b << (8 * n);
    }
    return r;
}
// sub.f16x2 d, a, b: both 16-bit halves a - b in binary16, round to
// nearest even (GCC's _Float16).
inline uint32_t rls_emu_sub_f16x2(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (int h = 0; h < 2; h++) {
        const uint16_t x = (uint16_t)(a >> (16 * h)), y = (uint16_t)(b >> (16 * h));
        _Float16 fx, fy;
        std::memcpy(&fx, &x, 2);
        std::memcpy(&fy, &y, 2);
        const _Float16 d = (_Float16)(fx - fy);
        uint16_t o;
        std::memcpy(&o, &d, 2);
        r |= (uint32_t)o << (16 * h);
    }
    return r;
}
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
// Atomics: the threads of a launch run on one OS thread and switch only at
// barriers and collectives, so a read-modify-write is atomic as written.
inline int atomicAdd(int* p, int v) {
    int old = *p;
    *p = old + v;
    return old;
}
inline unsigned atomicAdd(unsigned* p, unsigned v) {
    unsigned old = *p;
    *p = old + v;
    return old;
}
// Warp votes and shuffles over the full mask (the only mask scan.cu uses;
// another mask fails the launch).
bool __any_sync(unsigned mask, bool p);
unsigned __ballot_sync(unsigned mask, bool p);
int __shfl_sync(unsigned mask, int v, int srcLane);
// Dynamic shared memory (the launch's shared bytes, 0xff at the start of
// every block) and its 32-bit shared-window addresses (offsets from its
// start), as __cvta_generic_to_shared gives them.
unsigned char* rls_emu_dynamic_smem();
uint32_t rls_emu_smem_addr(const void* p);
// cp.async.cg.shared.global of 16 bytes (n of them read, the rest zero),
// commit_group and wait_group: each thread's copies land in groups, at the
// copy (early mode) or at the latest wait_group that must see them (late
// mode, emu_launch's async flag), so a read before its wait and a write
// into a stage still being read both show up as wrong results.
void rls_emu_cp_async16(uint32_t dst, const void* src, int n);
void rls_emu_cp_async_commit();
void rls_emu_cp_async_wait(int n);
// ldmatrix.sync.aligned.m8n8.x4.shared.b16: lanes 8j..8j+7 give the row
// addresses of matrix j; lane l receives row l/4, halves 2(l%4), 2(l%4)+1
// of each matrix j in register j.
void rls_emu_ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3);
