// rlsearch GPU kernels, part 2: exact top-k by a running per-query
// threshold.
//
//   rls_scan_init  best lists empty, thresholds 0, survivor counts 0
//   rls_scan16/64/128
//                  fused tensor-core GEMM + threshold filter over rows
//                  [rowLo, rowHi) of the fp16 corpus: every score whose key
//                  is above its query's threshold is appended (key, row) to
//                  the query's survivor list; nothing else leaves the chip
//   rls_scan16_i8/64_i8/128_i8
//                  the same over an int8 corpus (codes of ann's int8 shard:
//                  x = offset + scale∘code per dimension): half the HBM
//                  traffic; the host folds scale into the query and offset
//                  into one constant per query (see "int8 corpus" below)
//   rls_filter     the same filter over an fp32 score tile written by
//                  cuBLAS (the tiled path)
//   rls_merge      per query: best list ∪ survivors → the new best k
//                  (exact, ties by ascending row), threshold = its k-th key
//
// The host (ann/gpu_scan.go) runs scan or filter over row spans in
// ascending row order and a merge after each span. A span's rows are all
// above every row merged before, so a score equal to the threshold can
// never displace a kept entry (it ties and loses on its larger row): the
// filter's strict "key > threshold" is exact. The threshold is 0 ("every
// non-NaN score") until a query has k entries.
//
// Order and keys as in topk.cu (rls_key): descending score, ties by
// ascending row, NaN never ranks, -0 == +0.
//
// Compiled by `make kernels` (nvcc 11.8) to scan_sm80.ptx, scan_sm90.ptx and
// scan_sm90.cubin, committed and embedded by kernels.go. The plain-Go
// references are in ref.go (ScanRef, FilterRef, MergeRef) and Go replays of
// the index arithmetic (swizzle, ldmatrix lanes, mma fragments, warp
// compaction, radix passes) in scan_sim_test.go: keep all three in step.
// kernels/emu compiles this same file with g++ (RLS_EMU defined: the inline
// PTX below becomes calls into the emulator), so the kernels' own source
// runs in tests without a GPU too (scan_emu_test.go).
#include <cuda_fp16.h>
#include <stdint.h>

#include "mma.cuh" // rls_mma16816: D = A·B + D, m16n8k16, fp16 in, fp32 accumulate

#define RLS_KMAX 2048          // largest k rls_merge sorts (shared memory)
#define RLS_MERGE_THREADS 512  // threads per rls_merge block
#define RLS_FILTER_THREADS 256 // threads per rls_filter block
#define RLS_BM 128             // corpus rows per scan tile

#define FULL 0xffffffffu

// Order-preserving key (topk.cu): larger float -> larger key; 0 = never ranks.
__device__ __forceinline__ uint32_t rls_key2(float f) {
    uint32_t u = __float_as_uint(f);
    if (u == 0x80000000u) u = 0u;
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0u;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
#ifdef RLS_EMU
    return rls_emu_smem_addr(p);
#else
    return (uint32_t)__cvta_generic_to_shared(p);
#endif
}

// 16-byte asynchronous copy global -> shared; zero-fills when !valid (src
// is then not read but must be a valid address).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
    int n = valid ? 16 : 0;
#ifdef RLS_EMU
    rls_emu_cp_async16(dst, src, n);
#else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
#endif
}
#ifdef RLS_EMU
__device__ __forceinline__ void cp_async_commit() { rls_emu_cp_async_commit(); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { rls_emu_cp_async_wait(N); }
#else
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
#endif

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
#ifdef RLS_EMU
    rls_emu_ldmatrix_x4(addr, r0, r1, r2, r3);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
#endif
}

// int8 corpus. Row r of the int8 corpus holds codes c[r][j] (signed
// bytes); the score of query q is off[q] + Σ_j qs[q][j]·c[r][j], with qs =
// the query ∘ the shard's per-dimension scale (fp16) and off[q] = Σ_j
// q[j]·offset[j] (fp32), both made by the host (kernels.PackI8Queries).
// The codes go through the same cp.async pipeline as fp16 rows (16 codes
// per 16-byte chunk, 64-byte rows for BK = 64) and one ldmatrix.x4 gives a
// lane the 4 codes k = 4t..4t+3 of row g of four 8-row blocks (lane = 4g +
// t, as for b16 data: one b16 pair is two codes). They are widened to fp16
// (exact: |c| ≤ 128 < 2048) into the mma A fragment's registers: codes
// 4t, 4t+1 where the fragment holds k = 2t, 2t+1 and codes 4t+2, 4t+3 where
// it holds k = 2t+8, 2t+9. So the A operand's k order within each 16-code
// chunk is the permutation I8Perm (logical k → code index)
//   k:    0 1 2 3 4 5 6 7  8 9 10 11 12 13 14 15
//   code: 0 1 4 5 8 9 12 13 2 3  6  7 10 11 14 15
// and the host stores each query's 16-value groups in that order too
// (position k holds qs[16b + I8Perm[k]]), so the B fragments, loaded as for
// fp16, line up and the dot product is unchanged.
//
// i8x2_to_h2: codes in bytes sel of the biased word u = w ^ 0x80808080
// (byte b + 128, unsigned) become fp16 1024 + b + 128 by placing them
// under the exponent byte 0x64, then exactly b after subtracting 1152
// (0x6480) in fp16x2.
__device__ __forceinline__ uint32_t i8x2_to_h2(uint32_t biased, uint32_t sel) {
    const uint32_t h = __byte_perm(biased, 0x64646464u, sel);
#ifdef RLS_EMU
    return rls_emu_sub_f16x2(h, 0x64806480u);
#else
    uint32_t r;
    asm("sub.f16x2 %0, %1, %2;\n" : "=r"(r) : "r"(h), "r"(0x64806480u));
    return r;
#endif
}
#define RLS_I8_LO 0x7170u // bytes 0, 1 of the word under exponent bytes
#define RLS_I8_HI 0x7372u // bytes 2, 3

// Shared-memory tiles hold rows of CPR 16-byte chunks (CPR = 4 or 8: 64- or
// 128-byte rows). Chunk c of row r lives in 16-byte slot swz(r, c): the
// chunk index XORed with bits of the row, so that the 8 row addresses of an
// ldmatrix (8 consecutive rows, same chunk) and the 8 chunks of a
// quarter-warp's cp.async fall in 8 different 16-byte bank groups.
template <int CPR>
__device__ __forceinline__ int swz(int r, int c) {
    constexpr int SH = CPR == 8 ? 0 : 1;
    return r * CPR + (c ^ ((r >> SH) & (CPR - 1)));
}

// rls_scan<BN, BK, WM, WN, STAGES>: a persistent grid walks work items
// w = blockIdx.x + j·gridDim.x, w = (row tile rt, query block qb) with
// qb = w % nQB, so the CTAs running at one time share row tiles (one HBM
// read of a tile serves every query block through L2). Per work item the
// CTA computes the RLS_BM × BN score tile S = D_tile · Q_blockᵀ with
// mma.sync m16n8k16 (fp16 in, fp32 accumulate), dim in chunks of BK fed by
// a STAGES-deep cp.async pipeline that runs across work items (the loads of
// the next tile overlap this tile's last steps and its epilogue), then
// filters S against the thresholds. Warps: WM along rows × WN along
// queries; each warp owns (RLS_BM/WM) × (BN/WN) scores in registers.
//
// Arguments: corpus [rows, dim] fp16 (this device's share), dim % 8 == 0;
// rows [rowLo, rowHi); q [nQB·BN, dim] fp16, rows ≥ nq zero; theta [nq];
// cand [nq, cap] (key, row) pairs; count [nq] (grows past cap on overflow:
// the pairs past cap are dropped and rls_merge flags the query).
//
// I8: the corpus is int8 codes (see "int8 corpus" above); the query tile
// is fp16 as before. ES is the corpus element size, CPRA the 16-byte chunks
// per corpus row of a stage (CPR for the query rows).
template <int BN_, int BK_, int WM_, int WN_, int STAGES, bool I8_ = false>
struct ScanCfg {
    static constexpr bool I8 = I8_;
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int BM = RLS_BM, BN = BN_, BK = BK_;
    static constexpr int NT = WM * WN * 32;
    static constexpr int WTM = BM / WM, WTN = BN / WN;
    static constexpr int MI = WTM / 16, NI = WTN / 8;
    static constexpr int ES = I8 ? 1 : 2;
    static constexpr int CPR = BK / 8, CPRA = BK * ES / 16;
    static constexpr int KS = BK / 16;
    static constexpr int A_CHUNKS = BM * CPRA, B_CHUNKS = BN * CPR;
    static constexpr int A_BYTES = BM * BK * ES;
    static constexpr int STAGE_BYTES = A_BYTES + BN * BK * 2;
    static constexpr int ST = STAGES;
    static constexpr int SMEM = STAGES * STAGE_BYTES;
    static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be whole m16 × (2·n8) blocks");
    static_assert(!I8 || MI % 2 == 0, "an int8 ldmatrix.x4 covers two m16 blocks");
    static_assert(A_CHUNKS % NT == 0 && (B_CHUNKS % NT == 0 || B_CHUNKS < NT), "chunks per thread");
    static_assert((NT / CPR) % 8 == 0 && (NT / CPRA) % 8 == 0, "rows between a thread's chunks must keep the swizzle");
    static_assert((CPR == 4 || CPR == 8) && (CPRA == 4 || CPRA == 8), "rows must be 64 or 128 bytes");
};

template <class C>
__device__ __forceinline__ void scan_body(const void* __restrict__ corpusv, int dim, int rowLo, int rowHi,
                                          const __half* __restrict__ q, const float* __restrict__ qoff, int nq,
                                          const uint32_t* __restrict__ theta, uint2* __restrict__ cand,
                                          int* __restrict__ count, int cap) {
    const unsigned char* corpus = (const unsigned char*)corpusv;
#ifdef RLS_EMU
    unsigned char* smem = rls_emu_dynamic_smem();
#else
    extern __shared__ __align__(128) unsigned char smem[];
#endif
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % C::WM, wn = warp / C::WM;
    const int nTiles = (rowHi - rowLo + C::BM - 1) / C::BM;
    const int nQB = (nq + (C::BN - 1)) / C::BN;
    const int nWork = nTiles * nQB;
    const int KT = (dim + (C::BK - 1)) / C::BK;
    const int myWork = (int)blockIdx.x < nWork ? (nWork - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
    const int total = myWork * KT; // steps (KT ≤ 2^16 / BK·…: the host keeps this below 2^31)
    const uint32_t sbase = smem_addr(smem);

    // Loads: thread tid copies chunk c = tid % CPR of rows tid / CPR + j·RS
    // (RS = NT / CPR rows apart) of each tile; swz(r + j·RS, c) =
    // swz(r, c) + j·RS·CPR since RS is a multiple of 8 (see swz). The
    // corpus tile uses CPRA and RSA the same way.
    constexpr int RS = C::NT / C::CPR, RSA = C::NT / C::CPRA;
    const int lr = tid / C::CPR, lc = tid % C::CPR;
    const int lra = tid / C::CPRA, lca = tid % C::CPRA;
    const uint32_t ldst = swz<C::CPR>(lr, lc) * 16, ldstA = swz<C::CPRA>(lra, lca) * 16;
    // ldmatrix: lane row/chunk offsets within a warp's 16-row block, for
    // k16 step kk (chunks 2kk, 2kk+1); blocks mi, nj add 16·CPR·16 bytes.
    // int8 corpus: rows lane of a 32-row block (two m16 blocks), chunk kk.
    uint32_t aOff[C::KS], bOff[C::KS];
#pragma unroll
    for (int kk = 0; kk < C::KS; kk++) {
        aOff[kk] = C::I8 ? swz<C::CPRA>(wm * C::WTM + lane, kk) * 16
                         : swz<C::CPRA>(wm * C::WTM + (lane & 15), kk * 2 + (lane >> 4)) * 16;
        bOff[kk] = swz<C::CPR>(wn * C::WTN + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)) * 16;
    }

    // Producer position: step ls = (work j, dim chunk lkt), its stage.
    int lj = 0, lkt = 0, ls = 0, lstage = 0;
    auto load_next = [&]() {
        if (ls < total) {
            const int w = (int)blockIdx.x + lj * (int)gridDim.x;
            const int rt = w / nQB, qb = w - rt * nQB;
            const uint32_t sA = sbase + lstage * C::STAGE_BYTES + ldstA, sB = sbase + lstage * C::STAGE_BYTES + C::A_BYTES + ldst;
            const int kc = lkt * C::BK + lc * 8, kca = lkt * C::BK + lca * (16 / C::ES);
            const bool kok = kc < dim, koka = kca < dim;
            const int row0 = rowLo + rt * C::BM + lra;
            const unsigned char* a0 = corpus + ((long long)row0 * dim + kca) * C::ES;
#pragma unroll
            for (int j = 0; j < C::A_CHUNKS / C::NT; j++) {
                const bool ok = koka && row0 + j * RSA < rowHi;
                cp_async16(sA + j * RSA * C::CPRA * 16, ok ? a0 + (long long)j * RSA * dim * C::ES : corpus, ok);
            }
            const __half* b0 = q + (long long)(qb * C::BN + lr) * dim + kc;
#pragma unroll
            for (int j = 0; j < (C::B_CHUNKS + C::NT - 1) / C::NT; j++) {
                if (C::B_CHUNKS % C::NT == 0 || tid + j * C::NT < C::B_CHUNKS)
                    cp_async16(sB + j * RS * C::CPR * 16, kok ? b0 + (long long)j * RS * dim : q, kok);
            }
            if (++lkt == KT) { lkt = 0; lj++; }
        }
        ls++;
        if (++lstage == C::ST) lstage = 0;
        cp_async_commit(); // one group per step, empty past the end, so the wait count stays uniform
    };

    float acc[C::MI][C::NI][4];
#pragma unroll
    for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NI; ni++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[mi][ni][r] = 0.f;

#pragma unroll
    for (int s = 0; s < C::ST - 1; s++) load_next();

    int cj = 0, ckt = 0, cstage = 0; // consumer position
    for (int s = 0; s < total; s++) {
        cp_async_wait<C::ST - 2>();
        __syncthreads(); // step s has landed for every thread; step s-1's stage is free
        load_next();     // step s + STAGES - 1 into the stage step s-1 used
        const uint32_t sA = sbase + cstage * C::STAGE_BYTES, sB = sA + C::A_BYTES;
        if (++cstage == C::ST) cstage = 0;
#pragma unroll
        for (int kk = 0; kk < C::KS; kk++) {
            uint32_t af[C::MI][4], bf[C::NI][2];
            if (C::I8) {
#pragma unroll
                for (int m2 = 0; m2 < C::MI / 2; m2++) {
                    uint32_t r0, r1, r2, r3; // rows 0-7, 8-15, 16-23, 24-31 of the 32-row block
                    ldmatrix_x4(sA + aOff[kk] + m2 * 32 * C::CPRA * 16, r0, r1, r2, r3);
                    r0 ^= 0x80808080u, r1 ^= 0x80808080u, r2 ^= 0x80808080u, r3 ^= 0x80808080u;
                    af[2 * m2][0] = i8x2_to_h2(r0, RLS_I8_LO);
                    af[2 * m2][1] = i8x2_to_h2(r1, RLS_I8_LO);
                    af[2 * m2][2] = i8x2_to_h2(r0, RLS_I8_HI);
                    af[2 * m2][3] = i8x2_to_h2(r1, RLS_I8_HI);
                    af[2 * m2 + 1][0] = i8x2_to_h2(r2, RLS_I8_LO);
                    af[2 * m2 + 1][1] = i8x2_to_h2(r3, RLS_I8_LO);
                    af[2 * m2 + 1][2] = i8x2_to_h2(r2, RLS_I8_HI);
                    af[2 * m2 + 1][3] = i8x2_to_h2(r3, RLS_I8_HI);
                }
            } else {
#pragma unroll
                for (int mi = 0; mi < C::MI; mi++)
                    ldmatrix_x4(sA + aOff[kk] + mi * 16 * C::CPRA * 16, af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
            }
#pragma unroll
            for (int nj = 0; nj < C::NI / 2; nj++)
                ldmatrix_x4(sB + bOff[kk] + nj * 16 * C::CPR * 16, bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0], bf[2 * nj + 1][1]);
#pragma unroll
            for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
                for (int ni = 0; ni < C::NI; ni++) rls_mma16816(acc[mi][ni], af[mi], bf[ni]);
        }
        if (++ckt < KT) continue;
        ckt = 0;

        // Epilogue of work item cj: filter the tile's scores.
        const int w = (int)blockIdx.x + cj * (int)gridDim.x;
        cj++;
        const int rt = w / nQB, qb = w - rt * nQB;
        const int g = lane >> 2, t = lane & 3;
        const int rowBase = rowLo + rt * C::BM + wm * C::WTM + g; // + mi·16 + h·8
        const int qBase = qb * C::BN + wn * C::WTN + t * 2;       // + ni·8 + p
        uint32_t th[C::NI][2];
        bool any = false;
#pragma unroll
        for (int ni = 0; ni < C::NI; ni++)
#pragma unroll
            for (int p = 0; p < 2; p++) {
                const int qq = qBase + ni * 8 + p;
                th[ni][p] = qq < nq ? __ldg(theta + qq) : FULL; // no key exceeds FULL
                if (C::I8) {
                    const float off = qq < nq ? __ldg(qoff + qq) : 0.f;
#pragma unroll
                    for (int mi = 0; mi < C::MI; mi++) {
                        acc[mi][ni][p] += off;
                        acc[mi][ni][2 + p] += off;
                    }
                }
            }
#pragma unroll
        for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
            for (int ni = 0; ni < C::NI; ni++)
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const bool in = rowBase + mi * 16 + (r >> 1) * 8 < rowHi;
                    any |= in && rls_key2(acc[mi][ni][r]) > th[ni][r & 1];
                }
        if (__any_sync(FULL, any)) {
            // Rare after the first span. Per query column (ni, p) a lane
            // holds 2·MI scores: it reserves its survivors' slots with one
            // atomicAdd and writes them in row order.
#pragma unroll
            for (int ni = 0; ni < C::NI; ni++)
#pragma unroll
                for (int p = 0; p < 2; p++) {
                    int c = 0;
#pragma unroll
                    for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const bool in = rowBase + mi * 16 + h * 8 < rowHi;
                            c += in && rls_key2(acc[mi][ni][2 * h + p]) > th[ni][p];
                        }
                    if (c == 0) continue;
                    const int qq = qBase + ni * 8 + p;
                    int pos = atomicAdd(count + qq, c);
#pragma unroll
                    for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const int row = rowBase + mi * 16 + h * 8;
                            const uint32_t key = rls_key2(acc[mi][ni][2 * h + p]);
                            if (row < rowHi && key > th[ni][p]) {
                                if (pos < cap) cand[(long long)qq * cap + pos] = make_uint2(key, (uint32_t)row);
                                pos++;
                            }
                        }
                }
        }
#pragma unroll
        for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
            for (int ni = 0; ni < C::NI; ni++)
#pragma unroll
                for (int r = 0; r < 4; r++) acc[mi][ni][r] = 0.f;
    }
    cp_async_wait<0>();
}

// The three scan configurations (kernels.go: ScanConfigs). Shared memory is
// dynamic: STAGES · (128 + BN) · BK · 2 bytes.
//   rls_scan16:  batch ≤ 16, the GEMV-style pass: BN 16, BK 64, 4 warps along
//                rows (32 × 16 each), 4 stages, 72 KiB; memory bound, the
//                tensor cores make the 16 dot products per row free.
//   rls_scan64:  BN 64, BK 32, 2 × 2 warps of 64 × 32, 4 stages, 48 KiB.
//   rls_scan128: BN 128, BK 32, 2 × 4 warps of 64 × 32, 4 stages, 64 KiB (64 × 64
//                warp tiles spill registers in the epilogue under ptxas 11.8).
//   rls_scan16_i8, rls_scan64_i8, rls_scan128_i8: the same warp tiles over
//                an int8 corpus, BK 64 (64-byte corpus rows, 128-byte query
//                rows), 4 stages: 40, 64 and 96 KiB.
typedef ScanCfg<16, 64, 4, 1, 4> Scan16;
typedef ScanCfg<64, 32, 2, 2, 4> Scan64;
typedef ScanCfg<128, 32, 2, 4, 4> Scan128;
typedef ScanCfg<16, 64, 4, 1, 4, true> Scan16I8;
typedef ScanCfg<64, 64, 2, 2, 4, true> Scan64I8;
typedef ScanCfg<128, 64, 2, 4, 4, true> Scan128I8;

#define RLS_SCAN_ARGS                                                                                         \
    const __half *__restrict__ corpus, int dim, int rowLo, int rowHi, const __half *__restrict__ q, int nq, \
        const uint32_t *__restrict__ theta, uint2 *__restrict__ cand, int *__restrict__ count, int cap

extern "C" __global__ void __launch_bounds__(Scan16::NT, 3) rls_scan16(RLS_SCAN_ARGS) {
    scan_body<Scan16>(corpus, dim, rowLo, rowHi, q, nullptr, nq, theta, cand, count, cap);
}
extern "C" __global__ void __launch_bounds__(Scan64::NT, 2) rls_scan64(RLS_SCAN_ARGS) {
    scan_body<Scan64>(corpus, dim, rowLo, rowHi, q, nullptr, nq, theta, cand, count, cap);
}
extern "C" __global__ void __launch_bounds__(Scan128::NT, 1) rls_scan128(RLS_SCAN_ARGS) {
    scan_body<Scan128>(corpus, dim, rowLo, rowHi, q, nullptr, nq, theta, cand, count, cap);
}

// int8 kernels: corpus [rows, dim] int8 codes, dim % 16 == 0; q [nQB·BN,
// dim] fp16 in I8Perm order per 16 values (scale folded in); qoff [nq] fp32.
#define RLS_SCAN_I8_ARGS                                                                                            \
    const signed char *__restrict__ corpus, int dim, int rowLo, int rowHi, const __half *__restrict__ q,           \
        const float *__restrict__ qoff, int nq, const uint32_t *__restrict__ theta, uint2 *__restrict__ cand, \
        int *__restrict__ count, int cap

extern "C" __global__ void __launch_bounds__(Scan16I8::NT, 3) rls_scan16_i8(RLS_SCAN_I8_ARGS) {
    scan_body<Scan16I8>(corpus, dim, rowLo, rowHi, q, qoff, nq, theta, cand, count, cap);
}
extern "C" __global__ void __launch_bounds__(Scan64I8::NT, 2) rls_scan64_i8(RLS_SCAN_I8_ARGS) {
    scan_body<Scan64I8>(corpus, dim, rowLo, rowHi, q, qoff, nq, theta, cand, count, cap);
}
extern "C" __global__ void __launch_bounds__(Scan128I8::NT, 1) rls_scan128_i8(RLS_SCAN_I8_ARGS) {
    scan_body<Scan128I8>(corpus, dim, rowLo, rowHi, q, qoff, nq, theta, cand, count, cap);
}

// rls_scan_init: best[q·k + i] = (0, -1) (empty), theta[q] = 0, count[q] = 0,
// flags[q] = 0 for q < nq, i < k. Any grid.
extern "C" __global__ void rls_scan_init(uint2* best, int k, uint32_t* theta, int* count, int* flags, int nq) {
    const long long n = (long long)nq * k;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) best[i] = make_uint2(0u, FULL);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nq; i += stride) {
        theta[i] = 0u;
        count[i] = 0;
        flags[i] = 0;
    }
}

// rls_filter: the filter of rls_scan over a score tile instead of fused
// scores. Block (x, y = query qi) walks scores[qi·ldS + i], i < rows, in
// rounds of one warp-wide 32-score window per warp: a ballot of the scores
// whose key exceeds theta[qi], one atomicAdd on count[qi] per window with
// survivors, each survivor written (key, rowBase + i) at its rank in the
// ballot. Requires blockDim.x == RLS_FILTER_THREADS.
extern "C" __global__ void __launch_bounds__(RLS_FILTER_THREADS)
rls_filter(const float* __restrict__ scores, long long ldS, int rows, int rowBase, const uint32_t* __restrict__ theta,
           uint2* __restrict__ cand, int* __restrict__ count, int cap) {
    const int qi = blockIdx.y, lane = threadIdx.x & 31;
    const uint32_t th = theta[qi];
    const float* S = scores + (long long)qi * ldS;
    const int stride = gridDim.x * RLS_FILTER_THREADS;
    // Every lane of a warp runs the same number of rounds (the loop bound is
    // rounded up to whole warps) so that the ballot sees all 32 lanes.
    const int end = (rows + 31) & ~31;
    for (int i = blockIdx.x * RLS_FILTER_THREADS + threadIdx.x; i - lane < end; i += stride) {
        const uint32_t key = i < rows ? rls_key2(S[i]) : 0u;
        const bool pass = key > th;
        const unsigned b = __ballot_sync(FULL, pass);
        if (b == 0u) continue;
        int base = 0;
        if (lane == 0) base = atomicAdd(count + qi, __popc(b));
        base = __shfl_sync(FULL, base, 0);
        if (pass) {
            const int pos = base + __popc(b & ((1u << lane) - 1u));
            if (pos < cap) cand[(long long)qi * cap + pos] = make_uint2(key, (uint32_t)(rowBase + i));
        }
    }
}

// rls_merge: block q merges query q's best list best[q·k, q·k + k) (sorted,
// empty slots have row -1) with its survivors cand[q·cap, q·cap + count[q])
// into the new best list, exactly: each entry is the 64-bit composite
// key << 32 | ~row (larger ranks first; unique, since rows are), the
// want = min(k, entries)-th largest composite is found by radix select
// (8-bit digits from the top; it stops early once the digit's bin holds
// exactly the entries still wanted), the selected entries are gathered and
// sorted (bitonic, descending) in shared memory and written back. Then
// theta[q] = key of the k-th entry (0 while fewer than k), count[q] = 0;
// count[q] > cap sets flags[q] bit 0 (survivors were dropped: the caller
// recomputes the query another way). A block with count[q] == 0 returns at
// once. Requires blockDim.x == RLS_MERGE_THREADS and 1 ≤ k ≤ RLS_KMAX.
extern "C" __global__ void __launch_bounds__(RLS_MERGE_THREADS)
rls_merge(uint2* __restrict__ best, int k, const uint2* __restrict__ cand, int* __restrict__ count, int cap,
          uint32_t* __restrict__ theta, int* __restrict__ flags) {
    __shared__ uint32_t hist[256];
    __shared__ unsigned long long sk[RLS_KMAX];
    __shared__ unsigned long long shPrefix;
    __shared__ int shRemaining, shBin, shValid, shN;
    const int q = blockIdx.x, tid = threadIdx.x;
    const int raw = count[q];
    if (raw == 0) return;
    const int nc = min(raw, cap);
    uint2* B = best + (long long)q * k;
    const uint2* Cq = cand + (long long)q * cap;
    const int L = k + nc;
    // composite of entry i: best slots first, then survivors; 0 = empty.
    auto comp = [&](int i) -> unsigned long long {
        const uint2 e = i < k ? B[i] : Cq[i - k];
        if (i < k && (int)e.y < 0) return 0ull;
        return ((unsigned long long)e.x << 32) | (unsigned long long)(~e.y);
    };
    if (tid == 0) shValid = 0;
    __syncthreads();
    int v = 0;
    for (int i = tid; i < L; i += RLS_MERGE_THREADS) v += comp(i) != 0ull;
    atomicAdd(&shValid, v);
    __syncthreads();
    const int want = min(k, shValid);
    unsigned long long prefix = 0ull, mask = 0ull;
    int remaining = want;
    for (int shift = 56; shift >= 0 && want > 0; shift -= 8) {
        for (int i = tid; i < 256; i += RLS_MERGE_THREADS) hist[i] = 0u;
        __syncthreads();
        for (int i = tid; i < L; i += RLS_MERGE_THREADS) {
            const unsigned long long c = comp(i);
            if (c != 0ull && (c & mask) == prefix) atomicAdd(&hist[(c >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (tid == 0) {
            int cum = 0;
            for (int b = 255; b >= 0; b--) {
                const int h = (int)hist[b];
                if (cum + h >= remaining) {
                    shPrefix = prefix | ((unsigned long long)b << shift);
                    shRemaining = remaining - cum;
                    shBin = h;
                    break;
                }
                cum += h;
            }
        }
        __syncthreads();
        prefix = shPrefix;
        mask |= 0xffull << shift;
        const bool whole = shBin == shRemaining; // every entry of this bin is taken
        remaining = shRemaining;
        __syncthreads();
        if (whole) break;
    }
    // Gather the want entries whose masked composite is ≥ prefix.
    if (tid == 0) shN = 0;
    __syncthreads();
    if (want > 0)
        for (int i = tid; i < L; i += RLS_MERGE_THREADS) {
            const unsigned long long c = comp(i);
            if (c != 0ull && (c & mask) >= prefix) sk[atomicAdd(&shN, 1)] = c;
        }
    __syncthreads();
    int P = 1;
    while (P < want) P <<= 1;
    for (int i = want + tid; i < P; i += RLS_MERGE_THREADS) sk[i] = 0ull;
    __syncthreads();
    for (int size = 2; size <= P; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = tid; i < P; i += RLS_MERGE_THREADS) {
                const int j = i ^ stride;
                if (j > i) {
                    const unsigned long long a = sk[i], b = sk[j];
                    const bool desc = (i & size) == 0;
                    if (desc ? a < b : a > b) { sk[i] = b; sk[j] = a; }
                }
            }
            __syncthreads();
        }
    }
    for (int i = tid; i < k; i += RLS_MERGE_THREADS) {
        if (i < want) B[i] = make_uint2((uint32_t)(sk[i] >> 32), ~(uint32_t)sk[i]);
        else B[i] = make_uint2(0u, FULL);
    }
    if (tid == 0) {
        theta[q] = want == k ? (uint32_t)(sk[k - 1] >> 32) : 0u;
        count[q] = 0;
        if (raw > cap) flags[q] |= 1;
    }
}
