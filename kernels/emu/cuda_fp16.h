// Stand-in for CUDA's cuda_fp16.h when kernels/nn.cu is compiled with g++
// for the CPU emulator (emu.h). Only what nn.cu uses. Conversions go through
// GCC's _Float16 (IEEE binary16, round to nearest even, subnormals, inf and
// NaN), like __float2half_rn on the GPU.
#pragma once
#include <cstdint>
#include <cstring>

struct __half {
    uint16_t x;
};
struct __half2 {
    __half x, y;  // x is the low 16 bits, as on the GPU
};

inline __half __float2half_rn(float f) {
    _Float16 h = (_Float16)f;
    __half r;
    std::memcpy(&r.x, &h, 2);
    return r;
}
inline float __half2float(__half h) {
    _Float16 v;
    std::memcpy(&v, &h.x, 2);
    return (float)v;
}
inline __half2 __floats2half2_rn(float lo, float hi) { return __half2{__float2half_rn(lo), __float2half_rn(hi)}; }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
