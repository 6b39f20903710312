#!/usr/bin/env python3
"""Injects bugs into kernels/scan.cu one at a time and runs the emulator
tests (scan_emu_test.go) on each: every mutant must fail them.

    git worktree add /tmp/mut HEAD && python3 kernels/emu/mutate_scan.py /tmp/mut

WORKTREE is a scratch checkout of this repository (its scan.cu is edited
and restored); about 10 s per mutant. MUTANTS=text runs only the mutants
whose name contains text (e.g. MUTANTS=int8). Not part of make test.
"""
import os
import subprocess
import sys

root = os.path.abspath(sys.argv[1])
p = os.path.join(root, "kernels", "scan.cu")
orig = open(p).read()
missed = 0
muts = [
 ("barrier after wait removed", "        __syncthreads(); // step s has landed for every thread; step s-1's stage is free\n", "\n"),
 ("wait one group short", "cp_async_wait<C::ST - 2>();", "cp_async_wait<C::ST - 1>();"),
 ("A ldmatrix chunk lane bit dropped", "kk * 2 + (lane >> 4)) * 16;", "kk * 2) * 16;"),
 ("survivor count row bound off by one", "const bool in = rowBase + mi * 16 + h * 8 < rowHi;", "const bool in = rowBase + mi * 16 + h * 8 <= rowHi;"),
 ("write row bound off by one", "if (row < rowHi && key > th[ni][p]) {", "if (row <= rowHi && key > th[ni][p]) {"),
 ("B ldmatrix k-chunk lane bit dropped", "kk * 2 + ((lane >> 3) & 1)) * 16;", "kk * 2) * 16;"),
 ("merge barrier after histogram removed", "            if (c != 0ull && (c & mask) == prefix) atomicAdd(&hist[(c >> shift) & 255u], 1u);\n        }\n        __syncthreads();", "            if (c != 0ull && (c & mask) == prefix) atomicAdd(&hist[(c >> shift) & 255u], 1u);\n        }"),
 ("filter ballot lanes past rows pass", "const uint32_t key = i < rows ? rls_key2(S[i]) : 0u;", "const uint32_t key = i < rows ? rls_key2(S[i]) : 1u;"),
 ("init leaves counts", "        count[i] = 0;\n", "\n"),
 ("filter rank includes own lane", "__popc(b & ((1u << lane) - 1u))", "__popc(b & ((2u << lane) - 1u))"),
 ("merge tie order flipped", "| (unsigned long long)(~e.y);", "| (unsigned long long)(e.y);"),
 ("merge bitonic barrier removed", "            __syncthreads();\n        }\n    }\n    for (int i = tid; i < k;", "        }\n    }\n    for (int i = tid; i < k;"),
 ("strict threshold to >= in the count", "c += in && rls_key2(acc[mi][ni][2 * h + p]) > th[ni][p];", "c += in && rls_key2(acc[mi][ni][2 * h + p]) >= th[ni][p];"),
 ("pipeline prologue one stage short", "for (int s = 0; s < C::ST - 1; s++) load_next();", "for (int s = 0; s < C::ST - 2; s++) load_next();"),
 ("int8: high code pair taken from the low bytes", "af[2 * m2][2] = i8x2_to_h2(r0, RLS_I8_HI);", "af[2 * m2][2] = i8x2_to_h2(r0, RLS_I8_LO);"),
 ("int8: sign bias not applied", "r0 ^= 0x80808080u, r1 ^= 0x80808080u, r2 ^= 0x80808080u, r3 ^= 0x80808080u;", ""),
 ("int8: widening subtracts 1024 instead of 1152", "rls_emu_sub_f16x2(h, 0x64806480u)", "rls_emu_sub_f16x2(h, 0x64006400u)"),
 ("int8: offset missing from the second row half", "                        acc[mi][ni][2 + p] += off;\n", ""),
 ("int8: second m16 block from the first's rows", "ldmatrix_x4(sA + aOff[kk] + m2 * 32 * C::CPRA * 16, r0, r1, r2, r3);", "ldmatrix_x4(sA + aOff[kk] + m2 * 16 * C::CPRA * 16, r0, r1, r2, r3);"),
 ("int8: rows of the next block swapped in", "af[2 * m2 + 1][1] = i8x2_to_h2(r3, RLS_I8_LO);", "af[2 * m2 + 1][1] = i8x2_to_h2(r2, RLS_I8_LO);"),
 ("int8: k step reads the wrong chunk", "swz<C::CPRA>(wm * C::WTM + lane, kk) * 16", "swz<C::CPRA>(wm * C::WTM + lane, (kk + 1) % C::KS) * 16"),
 ("int8: chunk k offset in fp16 units", "kca = lkt * C::BK + lca * (16 / C::ES);", "kca = lkt * C::BK + lca * 8;"),
]
only = os.environ.get("MUTANTS", "")
muts = [m for m in muts if only in m[0]]
for name, a, b in muts:
    assert orig.count(a) == 1, name
    open(p, "w").write(orig.replace(a, b))
    r = subprocess.run(["go", "test", "./kernels", "-run", "Emu", "-count=1"], capture_output=True, text=True, cwd=root)
    out = (r.stdout + r.stderr)
    first = next((l.strip() for l in out.splitlines() if "scan_emu_test.go" in l or "kernelemu:" in l), out.strip().splitlines()[-1] if out.strip() else "")
    missed += r.returncode == 0
    print(f"{'CAUGHT' if r.returncode else 'MISSED'}: {name}: {first[:200]}", flush=True)
open(p, "w").write(orig)
print(f"{len(muts) - missed} of {len(muts)} mutants caught")
sys.exit(1 if missed else 0)
