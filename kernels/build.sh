#!/usr/bin/env bash
# Compiles topk.cu into the images kernels.go embeds. Usage: build.sh [OUTDIR]
# (default: this directory). Needs nvcc; the committed images come from
# Debian 12's nvidia-cuda-toolkit (nvcc 11.8, PTX ISA 7.8), which CUDA 12/13
# drivers JIT-compile. `make kernels` runs this.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-.}
flags=(-O3 -std=c++14)
nvcc "${flags[@]}" -arch=sm_80 -ptx -o "$out/topk_sm80.ptx" topk.cu
nvcc "${flags[@]}" -arch=sm_90 -ptx -o "$out/topk_sm90.ptx" topk.cu
nvcc "${flags[@]}" -arch=sm_90 -cubin -o "$out/topk_sm90.cubin" topk.cu
