// rlsearch transformer kernels: the non-GEMM parts of a BERT (E5) and a
// Qwen3 (reranker) forward pass in fp16 with fp32 arithmetic. The GEMMs run
// on cuBLAS (package cuda); these kernels do everything between them.
//
// Layout: a batch of B sequences is packed without padding into T = sum of
// lengths token rows; cu[b] .. cu[b+1] are sequence b's rows (cu has B+1
// entries, cu[0] = 0). Matrices are row-major. fp16 is __half; 1-D
// parameters (biases, norm gains) are fp32; the residual stream is fp32.
//
// Compiled by `make kernels` (nvcc 11.8) to nn_sm80.ptx, nn_sm90.ptx and
// nn_sm90.cubin, committed and embedded by nn.go. Every kernel has a
// plain-Go reference in nnref.go with the same arguments; keep them in
// step. kernels/emu compiles this same file with g++ (RLS_EMU defined) and
// runs it on the CPU, so that tests on machines without a GPU execute the
// kernels' own code (emu/README.md).
#include <cuda_fp16.h>
#include <stdint.h>

#include "mma.cuh"

#define RLS_ROW_THREADS 256  // block size of the row kernels (any multiple of 32 up to 1024 works)
#define RLS_ATT_BM 64        // attention: query rows per block (4 warps x 16)
#define RLS_ATT_BN 64        // attention: key rows per tile
#define RLS_ATT_THREADS 128  // attention: block size (launch with exactly this)

__device__ __forceinline__ float rls_neg_inf() { return __int_as_float(0xff800000); }

__device__ __forceinline__ float rls_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// rls_block_sum returns the sum of v over the block (blockDim.x a multiple
// of 32) to every thread. red is a __shared__ float[32]. Every thread of the
// block must call it (it holds two barriers).
__device__ __forceinline__ float rls_block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = rls_warp_sum(v);
    __syncthreads();  // red may still be read by the previous call
    if (lane == 0) red[warp] = v;
    __syncthreads();
    return rls_warp_sum(lane < nw ? red[lane] : 0.f);
}

// rls_ln_row finishes a LayerNorm of one row held in r[0, H) whose sum s
// this thread has accumulated over its elements (i = threadIdx.x, +=
// blockDim.x): r = (r - mean) · rstd · gamma + beta in place, o = fp16(r);
// biased variance in two passes (mean first), eps inside the square root.
__device__ __forceinline__ void rls_ln_row(float* r, __half* o, float s, int H, const float* gamma, const float* beta,
                                           float eps, float* red) {
    const float mean = rls_block_sum(s, red) / (float)H;
    float q = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        const float d = r[i] - mean;
        q += d * d;
    }
    const float rstd = rsqrtf(rls_block_sum(q, red) / (float)H + eps);
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        const float v = (r[i] - mean) * rstd * gamma[i] + beta[i];
        r[i] = v;
        o[i] = __float2half_rn(v);
    }
}

// rls_embed_ln (BERT embeddings): for token t < T (block t),
//   x = word[ids[t]] + type[types[t]] + pos[pos[t]]      (types NULL: type 0; typeemb NULL: none)
//   resid[t] = LayerNorm(x) * gamma + beta               (biased variance, eps inside the sqrt)
//   xh[t] = fp16(resid[t])
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_embed_ln(const int* ids, const int* pos, const int* types, const __half* word, const __half* posemb,
             const __half* typeemb, const float* gamma, const float* beta, float eps, int H, int T,
             float* resid, __half* xh) {
    __shared__ float red[32];
    const int t = blockIdx.x;
    if (t >= T) return;
    const __half* w = word + (long long)ids[t] * H;
    const __half* p = posemb + (long long)pos[t] * H;
    const __half* ty = typeemb ? typeemb + (long long)(types ? types[t] : 0) * H : (const __half*)0;
    float* r = resid + (long long)t * H;
    __half* o = xh + (long long)t * H;
    float s = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float v = __half2float(w[i]);
        if (ty) v += __half2float(ty[i]);
        v += __half2float(p[i]);
        r[i] = v;
        s += v;
    }
    rls_ln_row(r, o, s, H, gamma, beta, eps, red);
}

// rls_bias_ln (BERT post-LN residual): for row t < T (block t),
//   resid[t] = LayerNorm(resid[t] + bias) * gamma + beta;  xh[t] = fp16(resid[t])
// bias may be NULL. resid[t] arrives holding sublayer output + residual
// (the GEMM accumulated into it with beta = 1).
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_bias_ln(float* resid, const float* bias, const float* gamma, const float* beta, float eps, int H, int T,
            __half* xh) {
    __shared__ float red[32];
    const int t = blockIdx.x;
    if (t >= T) return;
    float* r = resid + (long long)t * H;
    __half* o = xh + (long long)t * H;
    float s = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float v = r[i];
        if (bias) v += bias[i];
        r[i] = v;
        s += v;
    }
    rls_ln_row(r, o, s, H, gamma, beta, eps, red);
}

__device__ __forceinline__ float rls_gelu(float v) { return 0.5f * v * (1.f + erff(v * 0.70710678118654752f)); }

// rls_bias_gelu: x[e] = fp16(gelu(x[e] + bias[e % N])) for e < total, the
// exact erf GELU of BERT (hidden_act "gelu"). bias may be NULL.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_bias_gelu(__half* x, const float* bias, int N, long long total) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((N & 7) == 0) {  // 8 halves (16 bytes) per step; rows start 16-byte aligned
        for (long long e = i * 8; e < total; e += stride * 8) {
            uint4 u = *reinterpret_cast<const uint4*>(x + e);
            __half* h = reinterpret_cast<__half*>(&u);
            const int c = (int)(e % N);
            for (int j = 0; j < 8; j++) {
                float v = __half2float(h[j]);
                if (bias) v += bias[c + j];
                h[j] = __float2half_rn(rls_gelu(v));
            }
            *reinterpret_cast<uint4*>(x + e) = u;
        }
        return;
    }
    for (long long e = i; e < total; e += stride) {
        float v = __half2float(x[e]);
        if (bias) v += bias[e % N];
        x[e] = __float2half_rn(rls_gelu(v));
    }
}

// rls_rmsnorm (Qwen3 RMSNorm): output row i < T (block i) reads input row
// src = rows ? rows[i] : i and writes
//   y = x[src] * rsqrt(mean(x[src]^2) + eps) * w
// to outh[i] (fp16) and/or outf[i] (fp32); either may be NULL.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_rmsnorm(const float* x, const int* rows, const float* w, float eps, int H, int T, __half* outh, float* outf) {
    __shared__ float red[32];
    const int t = blockIdx.x;
    if (t >= T) return;
    const float* r = x + (long long)(rows ? rows[t] : t) * H;
    float s = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) s += r[i] * r[i];
    const float k = rsqrtf(rls_block_sum(s, red) / (float)H + eps);
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        const float v = r[i] * k * w[i];
        if (outh) outh[(long long)t * H + i] = __float2half_rn(v);
        if (outf) outf[(long long)t * H + i] = v;
    }
}

// rls_qk_norm_rope (Qwen3): in place on the q and k heads of each token row
// of qkv (row stride ld; q heads 0..nq-1 in columns [0, nq*hd), k heads
// nq..nq+nk-1 after them). One warp per (head, token): grid (ceil((nq+nk)/4), T),
// 128 threads. Each head vector x (hd values) becomes
//   y = x * rsqrt(mean(x^2) + eps) * w        (w = qw or kw; skipped when NULL)
//   RoPE, rotate_half layout: for i < hd/2, a = pos[t] * inv_freq[i]:
//   y'[i] = y[i] cos a - y[i+hd/2] sin a,  y'[i+hd/2] = y[i+hd/2] cos a + y[i] sin a
extern "C" __global__ void __launch_bounds__(128)
rls_qk_norm_rope(__half* qkv, long long ld, int nq, int nk, int hd, const float* qw, const float* kw, float eps,
                 const int* pos, const float* inv_freq, int T) {
    const int t = blockIdx.y;
    const int head = blockIdx.x * 4 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (t >= T || head >= nq + nk) return;  // whole warps: no block barrier below
    __half* x = qkv + (long long)t * ld + (long long)head * hd;
    const float* w = head < nq ? qw : kw;
    float k = 1.f;
    if (w) {
        float s = 0.f;
        for (int d = lane; d < hd; d += 32) {
            const float v = __half2float(x[d]);
            s += v * v;
        }
        k = rsqrtf(rls_warp_sum(s) / (float)hd + eps);
    }
    const float p = (float)pos[t];
    const int half = hd >> 1;
    for (int i = lane; i < half; i += 32) {
        float a = __half2float(x[i]) * k, b = __half2float(x[i + half]) * k;
        if (w) {
            a *= w[i];
            b *= w[i + half];
        }
        float sn, cs;
        sincosf(p * inv_freq[i], &sn, &cs);
        x[i] = __float2half_rn(a * cs - b * sn);
        x[i + half] = __float2half_rn(b * cs + a * sn);
    }
}

__device__ __forceinline__ float rls_silu(float v) { return v / (1.f + expf(-v)); }

// rls_swiglu (Qwen3 MLP): gu is [T, 2I] (gate columns [0, I), up [I, 2I));
// out[t, i] = fp16(silu(gate[t, i]) * up[t, i]) for t < T, i < I.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_swiglu(const __half* gu, int I, long long T, __half* out) {
    const long long total = T * I;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((I & 7) == 0) {
        for (long long e = i * 8; e < total; e += stride * 8) {
            const long long t = e / I;
            const int c = (int)(e - t * I);
            uint4 g = *reinterpret_cast<const uint4*>(gu + t * 2 * I + c);
            uint4 u = *reinterpret_cast<const uint4*>(gu + t * 2 * I + I + c);
            const __half* gh = reinterpret_cast<const __half*>(&g);
            const __half* uh = reinterpret_cast<const __half*>(&u);
            uint4 r;
            __half* rh = reinterpret_cast<__half*>(&r);
            for (int j = 0; j < 8; j++) rh[j] = __float2half_rn(rls_silu(__half2float(gh[j])) * __half2float(uh[j]));
            *reinterpret_cast<uint4*>(out + e) = r;
        }
        return;
    }
    for (long long e = i; e < total; e += stride) {
        const long long t = e / I;
        const int c = (int)(e - t * I);
        out[e] = __float2half_rn(rls_silu(__half2float(gu[t * 2 * I + c])) * __half2float(gu[t * 2 * I + I + c]));
    }
}

// rls_embed_gather (Qwen3 embeddings): resid[t, h] = float(E[ids[t], h]).
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_embed_gather(const int* ids, const __half* E, int H, int T, float* resid) {
    const long long total = (long long)T * H;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const long long t = e / H;
        resid[e] = __half2float(E[(long long)ids[t] * H + (e - t * H)]);
    }
}

// rls_gather_f32: dst[i, h] = src[rows[i], h] for i < n, h < H.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_gather_f32(const float* src, const int* rows, int H, int n, float* dst) {
    const long long total = (long long)n * H;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const long long i = e / H;
        dst[e] = src[(long long)rows[i] * H + (e - i * H)];
    }
}

// rls_dot2 (the reranker's two LM-head rows): out[b*2 + j] = x[b] . w[j]
// for b < B (block b), j in {0, 1}; x is [B, H], w is [2, H], fp32.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_dot2(const float* x, const float* w, int H, int B, float* out) {
    __shared__ float red[32];
    const int b = blockIdx.x;
    if (b >= B) return;
    const float* r = x + (long long)b * H;
    float s0 = 0.f, s1 = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        s0 += r[i] * w[i];
        s1 += r[i] * w[H + i];
    }
    s0 = rls_block_sum(s0, red);
    s1 = rls_block_sum(s1, red);
    if (threadIdx.x == 0) {
        out[2 * b] = s0;
        out[2 * b + 1] = s1;
    }
}

// rls_pool (E5 pooling): for sequence b < B (block b) with rows cu[b] ..
// cu[b+1]-1 of x [T, H] fp32: v = mean of its rows (cls != 0: its first
// row); normalize != 0: v /= |v|_2 (unchanged when |v| = 0); out[b] = v.
// An empty sequence gives a zero row.
extern "C" __global__ void __launch_bounds__(RLS_ROW_THREADS)
rls_pool(const float* x, const int* cu, int H, int B, int cls, int normalize, float* out) {
    __shared__ float red[32];
    const int b = blockIdx.x;
    if (b >= B) return;
    const int lo = cu[b], n = cu[b + 1] - lo;
    float* o = out + (long long)b * H;
    float ss = 0.f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float v = 0.f;
        if (n > 0) {
            if (cls) {
                v = x[(long long)lo * H + i];
            } else {
                for (int t = 0; t < n; t++) v += x[(long long)(lo + t) * H + i];
                v /= (float)n;
            }
        }
        o[i] = v;
        ss += v * v;
    }
    ss = rls_block_sum(ss, red);
    if (!normalize || ss <= 0.f) return;
    const float k = 1.f / sqrtf(ss);
    for (int i = threadIdx.x; i < H; i += blockDim.x) o[i] *= k;
}

// ---------------------------------------------------------------------------
// Attention: flash-style (online softmax over key tiles, nothing of size
// seq x seq in memory), fp16 tensor-core products with fp32 accumulation
// through mma.sync m16n8k16, varlen (packed sequences), optional causal
// mask, grouped-query heads, optional q/k/v biases (BERT).
// ---------------------------------------------------------------------------

__device__ __forceinline__ uint32_t rls_pack2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
}

__device__ __forceinline__ uint32_t rls_pack2h(__half lo, __half hi) {
    return (uint32_t)(*reinterpret_cast<uint16_t*>(&lo)) | ((uint32_t)(*reinterpret_cast<uint16_t*>(&hi)) << 16);
}

// rls_att_load copies rows [row0, row0 + n) of columns [col, col + HD) of
// src (row stride ld) into the tile s (RLS_ATT_BM rows of HD + 8 halves),
// adding bias[0..HD) when not NULL; tile rows from n on are zeroed.
template <int HD>
__device__ __forceinline__ void rls_att_load(__half* s, const __half* src, long long ld, int row0, int n, int col,
                                             const float* bias) {
    constexpr int LDS = HD + 8, CH = HD / 8;
    for (int idx = threadIdx.x; idx < RLS_ATT_BM * CH; idx += blockDim.x) {
        const int r = idx / CH, c = (idx % CH) * 8;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (r < n) {
            v = *reinterpret_cast<const uint4*>(src + (long long)(row0 + r) * ld + col + c);
            if (bias) {
                __half* h = reinterpret_cast<__half*>(&v);
                for (int j = 0; j < 8; j++) h[j] = __float2half_rn(__half2float(h[j]) + bias[c + j]);
            }
        }
        *reinterpret_cast<uint4*>(s + r * LDS + c) = v;
    }
}

// rls_attn: block (x = query tile, y = head h, z = sequence b), 128 threads.
// Sequence b is rows s0 = cu[b] .. s0 + L - 1 of qkv (row stride ld):
// head h's query at columns q_off + h*HD, its key and value (kv head
// h / (nh/nkv)) at k_off + kh*HD and v_off + kh*HD. Query row i attends to
// keys j < L (causal: j <= i) with weights softmax_j(scale * q_i . k_j) and
// writes sum_j w_j v_j to out row s0 + i (q_last: only i = L-1, written to
// out row b), columns h*HD .. h*HD + HD - 1, fp16.
template <int HD>
__device__ __forceinline__ void rls_attn(const __half* qkv, long long ld, int q_off, int k_off, int v_off,
                                         const float* qb, const float* kb, const float* vb, int nh, int nkv,
                                         const int* cu, float scale, int causal, int q_last, __half* out,
                                         long long ld_out) {
    constexpr int LDS = HD + 8;
    constexpr int KS = HD / 16;  // k-steps of the q.k products
    constexpr int NO = HD / 8;   // n-tiles of the output
    __shared__ __align__(16) __half sA[RLS_ATT_BM * LDS];  // Q tile, then each V tile
    __shared__ __align__(16) __half sB[RLS_ATT_BN * LDS];  // K tile
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tq = lane & 3;
    const int b = blockIdx.z, h = blockIdx.y;
    const int s0 = cu[b], L = cu[b + 1] - s0;
    int q0, nq;
    if (q_last) {
        if (blockIdx.x > 0 || L <= 0) return;
        q0 = L - 1;
        nq = 1;
    } else {
        q0 = blockIdx.x * RLS_ATT_BM;
        if (q0 >= L) return;
        nq = min(RLS_ATT_BM, L - q0);
    }
    const int kh = h / (nh / nkv);
    rls_att_load<HD>(sA, qkv, ld, s0 + q0, nq, q_off + h * HD, qb ? qb + h * HD : (const float*)0);
    __syncthreads();
    const int r = warp * 16 + g;  // this thread's tile rows: r and r + 8
    uint32_t qa[KS][4];
    for (int ks = 0; ks < KS; ks++) {
        const int c = ks * 16 + 2 * tq;
        qa[ks][0] = *reinterpret_cast<const uint32_t*>(sA + r * LDS + c);
        qa[ks][1] = *reinterpret_cast<const uint32_t*>(sA + (r + 8) * LDS + c);
        qa[ks][2] = *reinterpret_cast<const uint32_t*>(sA + r * LDS + c + 8);
        qa[ks][3] = *reinterpret_cast<const uint32_t*>(sA + (r + 8) * LDS + c + 8);
    }
    float o[NO][4];
    for (int n = 0; n < NO; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    const float NEG = rls_neg_inf();
    float m0 = NEG, m1 = NEG, l0 = 0.f, l1 = 0.f;
    const int qi0 = q0 + r, qi1 = q0 + r + 8;  // query positions of rows r, r+8
    const int kv_end = causal ? min(L, q0 + nq) : L;
    const float sl2 = scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2(e))
    for (int j0 = 0; j0 < kv_end; j0 += RLS_ATT_BN) {
        const int nk = min(RLS_ATT_BN, kv_end - j0);
        __syncthreads();  // everyone is done with the previous K and V (and Q) tiles
        rls_att_load<HD>(sB, qkv, ld, s0 + j0, nk, k_off + kh * HD, kb ? kb + kh * HD : (const float*)0);
        rls_att_load<HD>(sA, qkv, ld, s0 + j0, nk, v_off + kh * HD, vb ? vb + kh * HD : (const float*)0);
        __syncthreads();
        float s[8][4];
        for (int nt = 0; nt < 8; nt++) {
            s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
            for (int ks = 0; ks < KS; ks++) {
                uint32_t bf[2];
                const __half* kr = sB + (nt * 8 + g) * LDS + ks * 16 + 2 * tq;
                bf[0] = *reinterpret_cast<const uint32_t*>(kr);
                bf[1] = *reinterpret_cast<const uint32_t*>(kr + 8);
                rls_mma16816(s[nt], qa[ks], bf);
            }
        }
        float mx0 = NEG, mx1 = NEG;
        for (int nt = 0; nt < 8; nt++) {
            for (int i = 0; i < 4; i++) {
                const int j = j0 + nt * 8 + 2 * tq + (i & 1);
                const int qi = i < 2 ? qi0 : qi1;
                const bool ok = j < kv_end && (!causal || j <= qi);
                const float v = ok ? s[nt][i] * sl2 : NEG;
                s[nt][i] = v;
                if (i < 2) mx0 = fmaxf(mx0, v);
                else mx1 = fmaxf(mx1, v);
            }
        }
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
        const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
        const float base0 = mn0 == NEG ? 0.f : mn0, base1 = mn1 == NEG ? 0.f : mn1;  // no inf - inf
        const float a0 = exp2f(m0 - base0), a1 = exp2f(m1 - base1);
        m0 = mn0;
        m1 = mn1;
        float ps0 = 0.f, ps1 = 0.f;
        for (int nt = 0; nt < 8; nt++) {
            s[nt][0] = exp2f(s[nt][0] - base0);
            s[nt][1] = exp2f(s[nt][1] - base0);
            s[nt][2] = exp2f(s[nt][2] - base1);
            s[nt][3] = exp2f(s[nt][3] - base1);
            ps0 += s[nt][0] + s[nt][1];
            ps1 += s[nt][2] + s[nt][3];
        }
        l0 = l0 * a0 + ps0;  // per-thread partial sums; the row's 4 threads are added at the end
        l1 = l1 * a1 + ps1;
        for (int n = 0; n < NO; n++) {
            o[n][0] *= a0;
            o[n][1] *= a0;
            o[n][2] *= a1;
            o[n][3] *= a1;
        }
        for (int kk = 0; kk < 4; kk++) {  // 16 keys per k-step
            uint32_t pa[4];
            pa[0] = rls_pack2(s[2 * kk][0], s[2 * kk][1]);
            pa[1] = rls_pack2(s[2 * kk][2], s[2 * kk][3]);
            pa[2] = rls_pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
            pa[3] = rls_pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
            const int k0 = kk * 16 + 2 * tq;
            for (int n = 0; n < NO; n++) {
                const int c = n * 8 + g;
                uint32_t bf[2];
                bf[0] = rls_pack2h(sA[k0 * LDS + c], sA[(k0 + 1) * LDS + c]);
                bf[1] = rls_pack2h(sA[(k0 + 8) * LDS + c], sA[(k0 + 9) * LDS + c]);
                rls_mma16816(o[n], pa, bf);
            }
        }
    }
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
    const long long row0 = q_last ? (long long)b : (long long)(s0 + q0 + r);
    const long long row1 = row0 + 8;
    for (int n = 0; n < NO; n++) {
        const int c = h * HD + n * 8 + 2 * tq;
        if (r < nq) *reinterpret_cast<uint32_t*>(out + row0 * ld_out + c) = rls_pack2(o[n][0] * inv0, o[n][1] * inv0);
        if (r + 8 < nq) *reinterpret_cast<uint32_t*>(out + row1 * ld_out + c) = rls_pack2(o[n][2] * inv1, o[n][3] * inv1);
    }
}

#define RLS_ATTN_ENTRY(HD)                                                                                        \
    extern "C" __global__ void __launch_bounds__(RLS_ATT_THREADS)                                                 \
    rls_attn_hd##HD(const __half* qkv, long long ld, int q_off, int k_off, int v_off, const float* qb,            \
                    const float* kb, const float* vb, int nh, int nkv, const int* cu, float scale, int causal,    \
                    int q_last, __half* out, long long ld_out) {                                                  \
        rls_attn<HD>(qkv, ld, q_off, k_off, v_off, qb, kb, vb, nh, nkv, cu, scale, causal, q_last, out, ld_out); \
    }

RLS_ATTN_ENTRY(16)
RLS_ATTN_ENTRY(32)
RLS_ATTN_ENTRY(64)
RLS_ATTN_ENTRY(128)
