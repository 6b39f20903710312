// rlsearch GPU kernels: fp32->fp16 query conversion and exact per-query
// top-K selection over score tiles / candidate lists.
//
// Order: descending score, ties by ascending row id (rlsearch.Less). NaN
// scores and rows < 0 never rank. -0 and +0 compare equal.
//
// Compiled by `make kernels` (nvcc 11.8) to topk_sm80.ptx, topk_sm90.ptx and
// topk_sm90.cubin, which are committed and embedded by kernels.go. Every
// kernel has a plain-Go reference in ref.go with the same arguments; keep
// them in step.
#include <cuda_fp16.h>
#include <stdint.h>

#define RLS_KMAX 2048     // largest k a block can select (shared candidates)
#define RLS_THREADS 1024  // threads per top-k block (launch with exactly this)

// Order-preserving key: larger float -> larger key; 0 means "never ranks".
__device__ __forceinline__ uint32_t rls_key(float f) {
    uint32_t u = __float_as_uint(f);
    if (u == 0x80000000u) u = 0u;                     // -0 == +0
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0u;   // NaN
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float rls_unkey(uint32_t k) {
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    return __uint_as_float(u);
}

// a ranks before b
__device__ __forceinline__ bool rls_before(uint32_t ka, int ra, uint32_t kb, int rb) {
    return ka > kb || (ka == kb && ra < rb);
}

// rls_f32_to_f16: dst[i] = round-to-nearest-even(src[i]) for i < n.
extern "C" __global__ void rls_f32_to_f16(const float* __restrict__ src, __half* __restrict__ dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) dst[i] = __float2half_rn(src[i]);
}

// rls_topk: block (x = segment s, y = query q) selects the best k entries of
// the segment [s*segLen, min((s+1)*segLen, len)) of query q's list
//   scores + q*ldS          (fp32)
//   rows   + q*ldS          (int32 row ids; NULL means row = rowBase + index)
// and writes them sorted to outS/outR + q*ldOut + s*k, k slots; slots past
// the number of valid entries get score -inf and row -1.
// When rows is given, entries with equal scores must appear in ascending row
// order within the list (true for concatenated sorted segments of ascending
// row ranges), so that taking the first ones in index order takes the
// smallest rows. In-place use (output overlapping the block's own input) is
// allowed: all reads finish before the first write.
// Requires blockDim.x == RLS_THREADS and 1 <= k <= RLS_KMAX.
extern "C" __global__ void __launch_bounds__(RLS_THREADS)
rls_topk(const float* scores, const int* rows, long long ldS, int len, int segLen, int rowBase, int k,
         float* outS, int* outR, long long ldOut) {
    __shared__ uint32_t hist[256];
    __shared__ uint32_t ckey[RLS_KMAX];
    __shared__ int crow[RLS_KMAX];
    __shared__ int warpSum[32];
    __shared__ uint32_t shPrefix;
    __shared__ int shRemaining, shGt, shEqTaken, shRoundTotal;

    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5;
    const int seg = blockIdx.x, q = blockIdx.y;
    const int lo = seg * segLen;
    const int hi = min(lo + segLen, len);
    const int n = max(hi - lo, 0);
    const float* S = scores + (long long)q * ldS + lo;
    const int* R = rows ? rows + (long long)q * ldS + lo : (const int*)0;
    float* OS = outS + (long long)q * ldOut + (long long)seg * k;
    int* OR = outR + (long long)q * ldOut + (long long)seg * k;
    const int want = min(k, n);

    // 1. Radix select the key T of the want-th best entry (4 passes of 8 bits).
    uint32_t prefix = 0, mask = 0;
    int remaining = want;
    if (want > 0) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            for (int i = tid; i < 256; i += blockDim.x) hist[i] = 0;
            __syncthreads();
            for (int i = tid; i < n; i += blockDim.x) {
                uint32_t key = (R && R[i] < 0) ? 0u : rls_key(S[i]);
                if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
            }
            __syncthreads();
            if (tid == 0) {
                int cum = 0;
                for (int b = 255; b >= 0; b--) {
                    int h = (int)hist[b];
                    if (cum + h >= remaining) {
                        shPrefix = prefix | ((uint32_t)b << shift);
                        shRemaining = remaining - cum;
                        break;
                    }
                    cum += h;
                }
            }
            __syncthreads();
            prefix = shPrefix;
            remaining = shRemaining;
            mask |= 0xffu << shift;
            __syncthreads();
        }
    }
    const uint32_t T = prefix;
    // remaining = how many entries equal to T are taken (the first ones in index order).
    const int need = (want > 0 && T != 0u) ? remaining : 0;
    const int nGt = want > 0 ? want - remaining : 0;
    const int nOut = nGt + need;

    // 2. Gather: entries > T anywhere in [0, nGt); the first `need` entries == T after them.
    if (tid == 0) { shGt = 0; shEqTaken = 0; }
    __syncthreads();
    if (want > 0) {
        for (int base = 0; base < n; base += blockDim.x) {
            int i = base + tid;
            uint32_t key = 0u;
            int row = -1;
            if (i < n) {
                row = R ? R[i] : rowBase + lo + i;
                key = (R && row < 0) ? 0u : rls_key(S[i]);
            }
            bool gt = key > T;
            bool eq = need > 0 && key == T && i < n;
            if (gt) {
                int p = atomicAdd(&shGt, 1);
                ckey[p] = key;
                crow[p] = row;
            }
            unsigned ballot = __ballot_sync(0xffffffffu, eq);
            if (lane == 0) warpSum[warp] = __popc(ballot);
            __syncthreads();
            if (tid == 0) {
                int acc = 0;
                for (int w = 0; w < nwarps; w++) { int c = warpSum[w]; warpSum[w] = acc; acc += c; }
                shRoundTotal = acc;
            }
            __syncthreads();
            int taken = shEqTaken;
            int total = shRoundTotal;
            if (eq) {
                // exclusive prefix: equal entries of earlier rounds, earlier warps, earlier lanes
                int p = taken + warpSum[warp] + __popc(ballot & ((1u << lane) - 1u));
                if (p < need) { ckey[nGt + p] = key; crow[nGt + p] = row; }
            }
            __syncthreads();
            if (tid == 0) shEqTaken = taken + total;
            __syncthreads();
            if (shEqTaken >= need && shGt >= nGt) break; // everything found
        }
    }
    __syncthreads();

    // 3. Bitonic sort of the nOut candidates (padded to a power of two).
    int P = 1;
    while (P < nOut) P <<= 1;
    for (int i = nOut + tid; i < P; i += blockDim.x) { ckey[i] = 0u; crow[i] = 0x7fffffff; }
    __syncthreads();
    for (int size = 2; size <= P; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = tid; i < P; i += blockDim.x) {
                int j = i ^ stride;
                if (j > i) {
                    uint32_t ki = ckey[i], kj = ckey[j];
                    int ri = crow[i], rj = crow[j];
                    bool up = (i & size) == 0;
                    bool sw = up ? rls_before(kj, rj, ki, ri) : rls_before(ki, ri, kj, rj);
                    if (sw) { ckey[i] = kj; ckey[j] = ki; crow[i] = rj; crow[j] = ri; }
                }
            }
            __syncthreads();
        }
    }

    // 4. Write k slots.
    for (int i = tid; i < k; i += blockDim.x) {
        if (i < nOut) { OS[i] = rls_unkey(ckey[i]); OR[i] = crow[i]; }
        else { OS[i] = __int_as_float(0xff800000); OR[i] = -1; }
    }
}
