#!/usr/bin/env bash
# Compiles topk.cu, scan.cu and nn.cu into the images kernels.go and nn.go
# embed, and records ptxas's resource report (registers, shared memory,
# spills) of scan.cu's sm_90 build in resources_sm90.txt (TestNoSpills reads
# it). Usage: build.sh [OUTDIR] (default: this directory). Needs nvcc; the
# committed images come from Debian 12's nvidia-cuda-toolkit (nvcc 11.8, PTX
# ISA 7.8), which CUDA 12/13 drivers JIT-compile. `make kernels` runs this.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-.}
flags=(-O3 -std=c++14)
for src in topk scan nn; do
  nvcc "${flags[@]}" -arch=sm_80 -ptx -o "$out/${src}_sm80.ptx" $src.cu
  nvcc "${flags[@]}" -arch=sm_90 -ptx -o "$out/${src}_sm90.ptx" $src.cu
done
nvcc "${flags[@]}" -arch=sm_90 -cubin -o "$out/topk_sm90.cubin" topk.cu
nvcc "${flags[@]}" -arch=sm_90 -cubin -o "$out/nn_sm90.cubin" nn.cu
nvcc "${flags[@]}" -arch=sm_90 -cubin -Xptxas -v -o "$out/scan_sm90.cubin" scan.cu 2> "$out/resources_sm90.txt.tmp"
# Keep only the report lines (ptxas prints them on stderr), without paths.
grep -E '^ptxas info|bytes stack frame' "$out/resources_sm90.txt.tmp" | sed -e 's/ for .sm_90.//' -e 's/^ *//' > "$out/resources_sm90.txt"
rm "$out/resources_sm90.txt.tmp"
