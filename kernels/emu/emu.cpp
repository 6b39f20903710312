// emu.cpp: a CPU emulator for the kernels of kernels/nn.cu and
// kernels/scan.cu, loaded by the
// Go package kernels/kernelemu (purego) in tests. Build:
//   g++ -std=c++17 -O2 -fno-strict-aliasing -shared -fPIC -I kernels/emu -o libnnemu.so kernels/emu/emu.cpp
// Every CUDA thread of a block is a fiber on one OS thread;
// __syncthreads, shuffles and mma.sync yield to a scheduler that releases a
// barrier once every live thread of the block (or lanes of the warp) has
// reached it, and reports a divergent barrier instead of hanging. Blocks run
// one after another. The threads of a block run in forward or reverse order
// (emu_launch's order), all together or one warp at a time as far as the
// barriers let it run, so a missing barrier shows up as a wrong result in
// one of the orders. Device memory is host memory with guard bytes on
// both sides: a write outside an allocation is reported after the launch,
// and a read there sees 0xff bytes (NaN in fp16 and fp32). GEMMs follow
// cublasGemmEx's column-major contract with fp16 A and B, fp32
// accumulation, and fp32 or fp16 C (C is not read when beta == 0).
#include "emu.h"

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

dim3 threadIdx, blockIdx, blockDim, gridDim;

#include "../nn.cu"
#include "../scan.cu"

namespace {

enum State { RUN, WAIT_BLOCK, WAIT_WARP, DONE };

// Context switches. On x86-64, emu_switch saves the callee-saved
// registers on the current stack, stores its stack pointer in *from and
// resumes the context whose stack pointer is to (no signal-mask system
// calls, unlike swapcontext, which made the emulator ten times slower).
// Elsewhere ucontext is used.
#if defined(__x86_64__)
#define EMU_FAST_SWITCH 1
extern "C" void emu_switch(void** from, void* to);
asm(R"(
.text
.globl emu_switch
.type emu_switch,@function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size emu_switch, .-emu_switch
)");
#endif

// One cp.async of a thread, not landed yet.
struct AsyncCopy {
    uint32_t dst;
    const void* src;
    int n;
};

struct Fiber {
    ucontext_t ctx;
    void* sp;
    std::vector<char> stack;
    State state;
    dim3 tid;
    int linear;
    std::vector<AsyncCopy> copies;  // issued, not landed, in issue order
    std::vector<size_t> groups;     // committed groups not landed: copies in each, oldest first
    size_t open = 0;                // copies issued since the last commit
};

constexpr size_t kStack = 256 << 10;
constexpr int kMaxThreads = 1024;
constexpr int kXch = 12;  // 32-bit words a lane publishes per collective

ucontext_t g_sched;
void* g_sched_sp;
std::vector<Fiber> g_fibers;
Fiber* g_cur;
void (*g_fn)(const uint64_t*);
const uint64_t* g_args;
uint32_t g_xch[kMaxThreads / 32][32][kXch];
std::string g_err;
std::string g_kerr;                // the first error a kernel's emulated instruction reported
std::vector<unsigned char> g_smem;  // dynamic shared memory of the running launch
bool g_async_late;                  // cp.async lands at the wait that needs it (else at the copy)

void kfail(const std::string& msg) {
    if (g_kerr.empty()) g_kerr = msg;
}

void yield(State s) {
    g_cur->state = s;
#ifdef EMU_FAST_SWITCH
    emu_switch(&g_cur->sp, g_sched_sp);
#else
    swapcontext(&g_cur->ctx, &g_sched);
#endif
}

void fiber_main() {
    g_fn(g_args);
    g_cur->state = DONE;
#ifdef EMU_FAST_SWITCH
    void* dead;
    emu_switch(&dead, g_sched_sp);  // never resumed
    abort();
#endif
    // ucontext: uc_link returns to the scheduler
}

void start_fiber(Fiber& f) {
#ifdef EMU_FAST_SWITCH
    // A fresh stack that emu_switch "returns" into fiber_main from: six
    // zero registers, fiber_main's address, and a dummy return address so
    // that fiber_main starts with the stack alignment of a called function.
    uintptr_t top = ((uintptr_t)(f.stack.data() + f.stack.size())) & ~(uintptr_t)15;
    void** sp = (void**)top;
    *--sp = nullptr;
    *--sp = (void*)&fiber_main;
    for (int i = 0; i < 6; i++) *--sp = nullptr;
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = &g_sched;
    makecontext(&f.ctx, fiber_main, 0);
#endif
}

void resume(Fiber& f) {
#ifdef EMU_FAST_SWITCH
    emu_switch(&g_sched_sp, f.sp);
#else
    swapcontext(&g_sched, &f.ctx);
#endif
}

int lane() { return g_cur->linear & 31; }
int warp() { return g_cur->linear >> 5; }

// run_block runs every thread of the current block to completion. Returns
// false (g_err set) on a divergent barrier.
bool run_block(int order) {
    const int n = (int)g_fibers.size();
    std::fill(g_smem.begin(), g_smem.end(), (unsigned char)0xff);
    for (auto& f : g_fibers) {
        start_fiber(f);
        f.state = RUN;
        f.copies.clear();
        f.groups.clear();
        f.open = 0;
    }
    const bool rev = order & 1, warpMajor = order & 2;
    const int nw = (n + 31) / 32;
    for (;;) {
        bool ran = false;
        if (warpMajor) {
            // One warp at a time, in warp order (reversed with rev): it runs,
            // its collectives released as soon as its lanes reach them, until
            // every live lane waits at __syncthreads or has returned; then
            // the next warp. A warp thus runs ahead of the others as far as
            // the barriers allow.
            for (int k = 0; k < nw; k++) {
                const int w = rev ? nw - 1 - k : k;
                const int l0 = w * 32, l1 = std::min(n, w * 32 + 32);
                for (;;) {
                    bool any = false;
                    for (int l = l0; l < l1; l++) {
                        Fiber& f = g_fibers[l];
                        if (f.state != RUN) continue;
                        g_cur = &f;
                        threadIdx = f.tid;
                        resume(f);
                        any = ran = true;
                    }
                    int wl = 0, ww = 0;
                    for (int l = l0; l < l1; l++) {
                        if (g_fibers[l].state != DONE) wl++;
                        if (g_fibers[l].state == WAIT_WARP) ww++;
                    }
                    if (ww > 0 && ww == wl && wl == l1 - l0) {
                        for (int l = l0; l < l1; l++) g_fibers[l].state = RUN;
                        continue;
                    }
                    if (!any) break;
                }
            }
        } else {
            for (int k = 0; k < n; k++) {
                Fiber& f = g_fibers[rev ? n - 1 - k : k];
                if (f.state != RUN) continue;
                g_cur = &f;
                threadIdx = f.tid;
                resume(f);
                ran = true;
            }
        }
        if (ran) continue;
        int live = 0, atBlock = 0;
        bool released = false;
        for (int w = 0; w * 32 < n; w++) {
            int wl = 0, ww = 0, done = 0;
            for (int l = w * 32; l < std::min(n, w * 32 + 32); l++) {
                State s = g_fibers[l].state;
                if (s == DONE) done++;
                else wl++;
                if (s == WAIT_WARP) ww++;
            }
            if (ww > 0 && ww == wl) {
                if (done > 0) {
                    g_err = "warp collective (shuffle or mma) with exited lanes in warp " + std::to_string(w);
                    return false;
                }
                for (int l = w * 32; l < std::min(n, w * 32 + 32); l++) g_fibers[l].state = RUN;
                released = true;
            }
        }
        if (released) continue;
        for (auto& f : g_fibers) {
            if (f.state != DONE) live++;
            if (f.state == WAIT_BLOCK) atBlock++;
        }
        if (live == 0) return true;
        if (atBlock == live) {
            if (live != n) {
                g_err = "__syncthreads reached by " + std::to_string(live) + " of " + std::to_string(n) +
                        " threads (the others returned)";
                return false;
            }
            for (auto& f : g_fibers) f.state = RUN;
            continue;
        }
        g_err = "divergent barrier: threads wait at both __syncthreads and a warp collective";
        return false;
    }
}

// Device memory: allocations with guard bytes.
constexpr size_t kGuard = 4096;
struct Alloc {
    char* base;
    size_t n;
};
std::map<uint64_t, Alloc> g_allocs;

bool check_guards(std::string* where) {
    for (auto& kv : g_allocs) {
        const Alloc& a = kv.second;
        for (size_t i = 0; i < kGuard; i++) {
            if ((unsigned char)a.base[i] != 0xff || (unsigned char)a.base[kGuard + a.n + i] != 0xff) {
                char buf[160];
                snprintf(buf, sizeof buf, "write outside the %zu-byte allocation at %#llx (%s guard, byte %zu)", a.n,
                         (unsigned long long)kv.first, (unsigned char)a.base[i] != 0xff ? "lower" : "upper", i);
                *where = buf;
                return false;
            }
        }
    }
    return true;
}

inline int32_t I32(uint64_t v) { return (int32_t)(uint32_t)v; }
inline int64_t I64(uint64_t v) { return (int64_t)v; }
inline float F32(uint64_t v) {
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
template <class T>
inline T P(uint64_t v) {
    return reinterpret_cast<T>((uintptr_t)v);
}

struct Kernel {
    const char* name;
    int nargs;
    void (*fn)(const uint64_t*);
};

// One entry per kernel of nn.cu: its arguments decoded in signature order
// from the 64-bit slots kernelemu fills exactly as the GPU launch does.
#define ATTN(HD)                                                                                                 \
    {"rls_attn_hd" #HD, 16, [](const uint64_t* a) {                                                              \
         rls_attn_hd##HD(P<const __half*>(a[0]), I64(a[1]), I32(a[2]), I32(a[3]), I32(a[4]), P<const float*>(a[5]), \
                         P<const float*>(a[6]), P<const float*>(a[7]), I32(a[8]), I32(a[9]), P<const int*>(a[10]),   \
                         F32(a[11]), I32(a[12]), I32(a[13]), P<__half*>(a[14]), I64(a[15]));                         \
     }}

const Kernel kKernels[] = {
    {"rls_embed_ln", 13,
     [](const uint64_t* a) {
         rls_embed_ln(P<const int*>(a[0]), P<const int*>(a[1]), P<const int*>(a[2]), P<const __half*>(a[3]),
                      P<const __half*>(a[4]), P<const __half*>(a[5]), P<const float*>(a[6]), P<const float*>(a[7]),
                      F32(a[8]), I32(a[9]), I32(a[10]), P<float*>(a[11]), P<__half*>(a[12]));
     }},
    {"rls_bias_ln", 8,
     [](const uint64_t* a) {
         rls_bias_ln(P<float*>(a[0]), P<const float*>(a[1]), P<const float*>(a[2]), P<const float*>(a[3]), F32(a[4]),
                     I32(a[5]), I32(a[6]), P<__half*>(a[7]));
     }},
    {"rls_bias_gelu", 4,
     [](const uint64_t* a) { rls_bias_gelu(P<__half*>(a[0]), P<const float*>(a[1]), I32(a[2]), I64(a[3])); }},
    {"rls_rmsnorm", 8,
     [](const uint64_t* a) {
         rls_rmsnorm(P<const float*>(a[0]), P<const int*>(a[1]), P<const float*>(a[2]), F32(a[3]), I32(a[4]), I32(a[5]),
                     P<__half*>(a[6]), P<float*>(a[7]));
     }},
    {"rls_qk_norm_rope", 11,
     [](const uint64_t* a) {
         rls_qk_norm_rope(P<__half*>(a[0]), I64(a[1]), I32(a[2]), I32(a[3]), I32(a[4]), P<const float*>(a[5]),
                          P<const float*>(a[6]), F32(a[7]), P<const int*>(a[8]), P<const float*>(a[9]), I32(a[10]));
     }},
    {"rls_swiglu", 4,
     [](const uint64_t* a) { rls_swiglu(P<const __half*>(a[0]), I32(a[1]), I64(a[2]), P<__half*>(a[3])); }},
    {"rls_embed_gather", 5,
     [](const uint64_t* a) {
         rls_embed_gather(P<const int*>(a[0]), P<const __half*>(a[1]), I32(a[2]), I32(a[3]), P<float*>(a[4]));
     }},
    {"rls_gather_f32", 5,
     [](const uint64_t* a) {
         rls_gather_f32(P<const float*>(a[0]), P<const int*>(a[1]), I32(a[2]), I32(a[3]), P<float*>(a[4]));
     }},
    {"rls_dot2", 5,
     [](const uint64_t* a) {
         rls_dot2(P<const float*>(a[0]), P<const float*>(a[1]), I32(a[2]), I32(a[3]), P<float*>(a[4]));
     }},
    {"rls_pool", 7,
     [](const uint64_t* a) {
         rls_pool(P<const float*>(a[0]), P<const int*>(a[1]), I32(a[2]), I32(a[3]), I32(a[4]), I32(a[5]),
                  P<float*>(a[6]));
     }},
    ATTN(16),
    ATTN(32),
    ATTN(64),
    ATTN(128),
#define SCAN(BN)                                                                                              \
    {"rls_scan" #BN, 10, [](const uint64_t* a) {                                                              \
         rls_scan##BN(P<const __half*>(a[0]), I32(a[1]), I32(a[2]), I32(a[3]), P<const __half*>(a[4]), I32(a[5]), \
                      P<const uint32_t*>(a[6]), P<uint2*>(a[7]), P<int*>(a[8]), I32(a[9]));                   \
     }}
    SCAN(16),
    SCAN(64),
    SCAN(128),
#define SCAN_I8(BN)                                                                                                \
    {"rls_scan" #BN "_i8", 11, [](const uint64_t* a) {                                                             \
         rls_scan##BN##_i8(P<const signed char*>(a[0]), I32(a[1]), I32(a[2]), I32(a[3]), P<const __half*>(a[4]),  \
                           P<const float*>(a[5]), I32(a[6]), P<const uint32_t*>(a[7]), P<uint2*>(a[8]), P<int*>(a[9]), \
                           I32(a[10]));                                                                            \
     }}
    SCAN_I8(16),
    SCAN_I8(64),
    SCAN_I8(128),
    {"rls_scan_init", 6,
     [](const uint64_t* a) {
         rls_scan_init(P<uint2*>(a[0]), I32(a[1]), P<uint32_t*>(a[2]), P<int*>(a[3]), P<int*>(a[4]), I32(a[5]));
     }},
    {"rls_filter", 8,
     [](const uint64_t* a) {
         rls_filter(P<const float*>(a[0]), I64(a[1]), I32(a[2]), I32(a[3]), P<const uint32_t*>(a[4]), P<uint2*>(a[5]),
                    P<int*>(a[6]), I32(a[7]));
     }},
    {"rls_merge", 7,
     [](const uint64_t* a) {
         rls_merge(P<uint2*>(a[0]), I32(a[1]), P<const uint2*>(a[2]), P<int*>(a[3]), I32(a[4]), P<uint32_t*>(a[5]),
                   P<int*>(a[6]));
     }},
};

void set_err(char* err, int errlen, const std::string& msg) {
    if (err && errlen > 0) snprintf(err, errlen, "%s", msg.c_str());
}

}  // namespace

void __syncthreads() { yield(WAIT_BLOCK); }

template <class T>
static T shfl_xor(T v, int m) {
    uint32_t u;
    memcpy(&u, &v, 4);
    g_xch[warp()][lane()][0] = u;
    yield(WAIT_WARP);
    u = g_xch[warp()][lane() ^ (m & 31)][0];
    yield(WAIT_WARP);
    memcpy(&v, &u, 4);
    return v;
}
float __shfl_xor_sync(unsigned, float v, int m) { return shfl_xor(v, m); }
int __shfl_xor_sync(unsigned, int v, int m) { return shfl_xor(v, m); }

static void full_mask(unsigned mask, const char* op) {
    if (mask != 0xffffffffu) kfail(std::string(op) + " with a mask other than 0xffffffff");
}

unsigned __ballot_sync(unsigned mask, bool p) {
    full_mask(mask, "__ballot_sync");
    g_xch[warp()][lane()][0] = p ? 1u : 0u;
    yield(WAIT_WARP);
    unsigned b = 0;
    for (int l = 0; l < 32; l++) b |= (g_xch[warp()][l][0] & 1u) << l;
    yield(WAIT_WARP);
    return b;
}
bool __any_sync(unsigned mask, bool p) { return __ballot_sync(mask, p) != 0u; }
int __shfl_sync(unsigned mask, int v, int src) {
    full_mask(mask, "__shfl_sync");
    g_xch[warp()][lane()][0] = (uint32_t)v;
    yield(WAIT_WARP);
    const int u = (int)g_xch[warp()][src & 31][0];
    yield(WAIT_WARP);
    return u;
}

unsigned char* rls_emu_dynamic_smem() { return g_smem.data(); }
uint32_t rls_emu_smem_addr(const void* p) {
    const unsigned char* b = g_smem.data();
    const unsigned char* c = (const unsigned char*)p;
    if (c < b || c > b + g_smem.size()) {
        kfail("__cvta_generic_to_shared of an address outside the dynamic shared memory");
        return 0;
    }
    return (uint32_t)(c - b);
}

static bool smem_range(uint32_t addr, size_t n, const char* op) {
    if (addr % 16 != 0) {
        kfail(std::string(op) + ": shared address " + std::to_string(addr) + " is not 16-byte aligned");
        return false;
    }
    if ((size_t)addr + n > g_smem.size()) {
        kfail(std::string(op) + ": shared bytes [" + std::to_string(addr) + ", " + std::to_string(addr + n) +
              ") outside the launch's " + std::to_string(g_smem.size()) + " bytes of dynamic shared memory");
        return false;
    }
    return true;
}

static void land(const AsyncCopy& c) {
    unsigned char* d = g_smem.data() + c.dst;
    if (c.n > 0) memcpy(d, c.src, (size_t)c.n);
    memset(d + c.n, 0, 16 - (size_t)c.n);
}

void rls_emu_cp_async16(uint32_t dst, const void* src, int n) {
    if (n < 0 || n > 16) {
        kfail("cp.async with src-size " + std::to_string(n));
        return;
    }
    if (!smem_range(dst, 16, "cp.async")) return;
    if (!g_async_late) {
        land(AsyncCopy{dst, src, n});
        g_cur->open++;
        return;
    }
    g_cur->copies.push_back(AsyncCopy{dst, src, n});
    g_cur->open++;
}
void rls_emu_cp_async_commit() {
    g_cur->groups.push_back(g_cur->open);
    g_cur->open = 0;
}
void rls_emu_cp_async_wait(int n) {
    Fiber& f = *g_cur;
    // Land the oldest committed groups until at most n are pending.
    while ((int)f.groups.size() > n) {
        const size_t c = f.groups.front();
        f.groups.erase(f.groups.begin());
        if (g_async_late) {
            for (size_t i = 0; i < c; i++) land(f.copies[i]);
            f.copies.erase(f.copies.begin(), f.copies.begin() + (long)c);
        }
    }
}

void rls_emu_ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
    const int w = warp(), l = lane();
    smem_range(addr, 16, "ldmatrix");
    g_xch[w][l][0] = addr;
    yield(WAIT_WARP);
    uint32_t out[4];
    for (int j = 0; j < 4; j++) {
        const uint32_t row = g_xch[w][j * 8 + (l >> 2)][0];
        out[j] = 0xffffffffu;
        if ((size_t)row + 16 <= g_smem.size()) memcpy(&out[j], g_smem.data() + row + 4 * (l & 3), 4);
    }
    yield(WAIT_WARP);
    r0 = out[0];
    r1 = out[1];
    r2 = out[2];
    r3 = out[3];
}

// The PTX ISA fragment layouts of mma.m16n8k16.row.col.f32.f16.f16.f32
// (see rls_mma16816 in mma.cuh): lane 4g+q holds A rows g, g+8 and columns
// 2q, 2q+1, 2q+8, 2q+9; B columns g and rows 2q, 2q+1, 2q+8, 2q+9; D rows
// g, g+8 and columns 2q, 2q+1.
void rls_emu_mma16816(float* d, const uint32_t* a, const uint32_t* b) {
    const int w = warp(), l = lane();
    uint32_t* x = g_xch[w][l];
    for (int i = 0; i < 4; i++) x[i] = a[i];
    x[4] = b[0];
    x[5] = b[1];
    yield(WAIT_WARP);
    auto half = [](uint32_t reg, int hi) {
        __half h;
        h.x = (uint16_t)(hi ? reg >> 16 : reg & 0xffff);
        return __half2float(h);
    };
    auto A = [&](int row, int k) {
        const uint32_t* src = g_xch[w][(row % 8) * 4 + (k % 8) / 2];
        return half(src[(row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)], k & 1);
    };
    auto B = [&](int k, int col) {
        const uint32_t* src = g_xch[w][col * 4 + (k % 8) / 2];
        return half(src[4 + (k >= 8 ? 1 : 0)], k & 1);
    };
    const int g = l >> 2, q = l & 3;
    float r[4];
    for (int i = 0; i < 4; i++) {
        const int row = g + (i >= 2 ? 8 : 0), col = 2 * q + (i & 1);
        float acc = d[i];
        for (int k = 0; k < 16; k++) acc += A(row, k) * B(k, col);
        r[i] = acc;
    }
    yield(WAIT_WARP);  // every lane has read the fragments before they are reused
    for (int i = 0; i < 4; i++) d[i] = r[i];
}

extern "C" {

// LaunchDesc mirrors kernelemu's launchDesc (all fields 64-bit).
struct LaunchDesc {
    uint64_t name;  // NUL-terminated kernel name
    uint64_t grid[3], block[3];
    uint64_t args;  // uint64_t[nargs]
    uint64_t nargs;
    uint64_t order;  // bit 0: threads (warps) run in decreasing index; bit 1: one warp at a time
    uint64_t err;    // char[errlen]
    uint64_t errlen;
    uint64_t shared;      // dynamic shared memory bytes
    uint64_t asyncLate;   // 1: cp.async lands at the wait_group that needs it; 0: at the copy
};

int emu_launch(const LaunchDesc* d) {
    char* err = P<char*>(d->err);
    const int errlen = (int)d->errlen;
    const char* name = P<const char*>(d->name);
    const Kernel* k = nullptr;
    for (const Kernel& c : kKernels)
        if (strcmp(c.name, name) == 0) k = &c;
    if (!k) {
        set_err(err, errlen, std::string("no kernel named ") + name);
        return 1;
    }
    if ((int)d->nargs != k->nargs) {
        set_err(err, errlen, std::string(name) + ": " + std::to_string(d->nargs) + " arguments, want " +
                                 std::to_string(k->nargs));
        return 1;
    }
    const unsigned bx = (unsigned)d->block[0], by = (unsigned)d->block[1], bz = (unsigned)d->block[2];
    const uint64_t nt = (uint64_t)bx * by * bz;
    if (nt == 0 || nt > kMaxThreads || d->grid[0] == 0 || d->grid[1] == 0 || d->grid[2] == 0 ||
        d->grid[0] > 0x7fffffffu || d->grid[1] > 65535 || d->grid[2] > 65535) {
        set_err(err, errlen, std::string(name) + ": bad launch geometry");
        return 1;
    }
    g_fibers.resize(nt);
    int i = 0;
    for (unsigned z = 0; z < bz; z++)
        for (unsigned y = 0; y < by; y++)
            for (unsigned x = 0; x < bx; x++, i++) {
                Fiber& f = g_fibers[i];
                if (f.stack.size() != kStack) f.stack.assign(kStack, 0);
                f.tid = dim3{x, y, z};
                f.linear = i;
            }
    blockDim = dim3{bx, by, bz};
    gridDim = dim3{(unsigned)d->grid[0], (unsigned)d->grid[1], (unsigned)d->grid[2]};
    if (d->shared > (228u << 10)) {
        set_err(err, errlen, std::string(name) + ": " + std::to_string(d->shared) + " bytes of dynamic shared memory");
        return 1;
    }
    g_smem.assign((size_t)d->shared, 0xff);
    g_async_late = d->asyncLate != 0;
    g_kerr.clear();
    g_fn = k->fn;
    g_args = P<const uint64_t*>(d->args);
    for (unsigned z = 0; z < gridDim.z; z++)
        for (unsigned y = 0; y < gridDim.y; y++)
            for (unsigned x = 0; x < gridDim.x; x++) {
                blockIdx = dim3{x, y, z};
                const bool ok = run_block((int)d->order);
                if (!ok || !g_kerr.empty()) {
                    set_err(err, errlen, std::string(name) + " block (" + std::to_string(x) + "," + std::to_string(y) +
                                             "," + std::to_string(z) + "): " + (ok ? g_kerr : g_err));
                    return 1;
                }
            }
    std::string where;
    if (!check_guards(&where)) {
        set_err(err, errlen, std::string(name) + ": " + where);
        return 1;
    }
    return 0;
}

uint64_t emu_alloc(uint64_t n) {
    char* base = (char*)aligned_alloc(kGuard, kGuard + ((n + kGuard - 1) / kGuard) * kGuard + kGuard);
    if (!base) return 0;
    memset(base, 0xff, kGuard + ((n + kGuard - 1) / kGuard) * kGuard + kGuard);
    const uint64_t p = (uint64_t)(uintptr_t)(base + kGuard);
    g_allocs[p] = Alloc{base, n};
    return p;
}

void emu_free(uint64_t p) {
    auto it = g_allocs.find(p);
    if (it == g_allocs.end()) return;
    free(it->second.base);
    g_allocs.erase(it);
}

// emu_copy copies n bytes; either side may be host memory of the caller.
void emu_copy(uint64_t dst, uint64_t src, uint64_t n) { memcpy(P<void*>(dst), P<const void*>(src), n); }

// GemmDesc mirrors kernelemu's gemmDesc (all fields 64-bit; alpha and beta
// are float32 bits).
struct GemmDesc {
    uint64_t transA, transB, m, n, k;
    uint64_t alpha, a, lda, b, ldb, beta, c, ldc, cHalf;
};

int emu_gemm(const GemmDesc* g) {
    const int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    const int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;
    const float alpha = F32(g->alpha), beta = F32(g->beta);
    const __half* A = P<const __half*>(g->a);
    const __half* B = P<const __half*>(g->b);
    if (m <= 0 || n <= 0 || k <= 0) return 7;  // CUBLAS_STATUS_INVALID_VALUE
    if (lda < (g->transA ? k : m) || ldb < (g->transB ? n : k) || ldc < m) return 7;
    std::vector<float> arow(k);
    for (int i = 0; i < m; i++) {
        for (int l = 0; l < k; l++) arow[l] = __half2float(g->transA ? A[l + (int64_t)i * lda] : A[i + (int64_t)l * lda]);
        for (int j = 0; j < n; j++) {
            float acc = 0.f;
            for (int l = 0; l < k; l++) {
                const float bv = __half2float(g->transB ? B[j + (int64_t)l * ldb] : B[l + (int64_t)j * ldb]);
                acc += arow[l] * bv;
            }
            const int64_t ci = i + (int64_t)j * ldc;
            if (g->cHalf) {
                __half* C = P<__half*>(g->c);
                float v = alpha * acc;
                if (beta != 0.f) v += beta * __half2float(C[ci]);
                C[ci] = __float2half_rn(v);
            } else {
                float* C = P<float*>(g->c);
                float v = alpha * acc;
                if (beta != 0.f) v += beta * C[ci];
                C[ci] = v;
            }
        }
    }
    std::string where;
    if (!check_guards(&where)) {
        fprintf(stderr, "emu_gemm: %s\n", where.c_str());
        return 14;  // CUBLAS_STATUS_INTERNAL_ERROR
    }
    return 0;
}

}  // extern "C"
