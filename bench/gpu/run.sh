#!/usr/bin/env bash
# GPU check and benchmark, for a machine with an NVIDIA GPU, CUDA driver,
# cuBLAS, python3 + PyTorch, and no Go toolchain. Run from the repository
# root after `bash bench/gpu/build.sh` on the build machine (carry
# bench/gpu/bin). Everything lands in $OUT (default out/gpu). Budget: about
# 10 minutes on one H200 (tests ~2 min, Go benchmark ~3 min, PyTorch ~3 min).
#
#   1. GPU tests with REQUIRE_GPU=1 (a missing GPU fails, never skips):
#      cuda (buffers, copies, GEMM), kernels (rls_topk/rls_f32_to_f16 vs the
#      Go references), ann (GPU index vs the exact flat oracle at the issue's
#      sizes, batching, and the CPU simulation of the same code).
#   2. BenchmarkGPUThroughput: queries/s, ms/batch and roofline fraction at
#      batch 1/64/512, k=10, over n = $SIZES synthetic 768-d fp16 unit vectors.
#   3. torch_baseline.py: torch.topk(q @ D.T) on the same shapes, same run.
#   4. summary.md: both side by side with the ratio.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/gpu}
SIZES=${SIZES:-1000000,5000000,21000000}
BIN=$PWD/bench/gpu/bin
# Per-step time limits (s), overridable so that the whole run fits one device call.
T_CUDA=${T_CUDA:-60} T_KERNELS=${T_KERNELS:-90} T_ANN=${T_ANN:-240} T_BENCH=${T_BENCH:-240} T_TORCH=${T_TORCH:-200}
# cuBLAS from CUDA 13 often lives only in PyTorch's wheel (nvidia/cublas/lib), off the loader path.
if [ -z "${RLSEARCH_CUBLAS_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
  site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  lib=$(find $site /usr/local /usr/lib /opt 2>/dev/null -name 'libcublas.so.1[123]' | head -n1)
  [ -n "$lib" ] && export RLSEARCH_CUBLAS_LIB=$lib LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
echo "cuBLAS: ${RLSEARCH_CUBLAS_LIB:-from the loader path}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
status=0
{ nvidia-smi; nvcc --version; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'; } > "$OUT/env.txt" 2>&1
export REQUIRE_GPU=1
run_test() { # pkg pattern timeout
  local pkg=$1 pat=$2 t=$3
  echo "== $pkg tests ($pat)"
  ( cd "$pkg" && timeout "$t" "$BIN/$pkg.test" -test.run "$pat" -test.v -test.count=1 ) > "$OUT/test-$pkg.txt" 2>&1
  local rc=$?
  grep -E '^(--- |ok|FAIL|PASS)' "$OUT/test-$pkg.txt" | grep -v '^    ' | tail -n 40
  [ $rc -eq 0 ] || { echo "!! $pkg tests failed (rc $rc), see $OUT/test-$pkg.txt"; status=1; }
}
run_test cuda . "$T_CUDA"
run_test kernels . "$T_KERNELS"
run_test ann 'TestGPU' "$T_ANN"
echo "== Go benchmark (n = $SIZES)"
rm -f "$OUT/bench-rlsearch.jsonl"
( cd ann && RLSEARCH_GPU_BENCH_N=$SIZES RLSEARCH_GPU_BENCH_JSON=$OUT/bench-rlsearch.jsonl timeout "$T_BENCH" \
    "$BIN/ann.test" -test.run '^$' -test.bench BenchmarkGPUThroughput -test.benchtime 2s -test.v ) > "$OUT/bench-rlsearch.txt" 2>&1 \
  || { echo "!! Go benchmark failed, see $OUT/bench-rlsearch.txt"; status=1; }
grep -E 'Benchmark|uploaded' "$OUT/bench-rlsearch.txt"
echo "== PyTorch baseline"
timeout "$T_TORCH" python3 bench/gpu/torch_baseline.py --n "$SIZES" > "$OUT/bench-torch.jsonl" 2> "$OUT/bench-torch.err" \
  || { echo "!! torch baseline failed, see $OUT/bench-torch.err"; status=1; }
python3 bench/gpu/summary.py "$OUT/bench-rlsearch.jsonl" "$OUT/bench-torch.jsonl" | tee "$OUT/summary.md"
exit $status
