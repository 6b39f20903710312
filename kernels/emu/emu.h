// emu.h: what kernels/nn.cu needs from CUDA, for running it on the CPU
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
