#!/usr/bin/env bash
# GPU check and benchmark for one device call: a machine with an NVIDIA GPU,
# its driver, cuBLAS, python3 + PyTorch, and no Go toolchain. Run from the
# repository root after `bash bench/gpu/build.sh` on the build machine (carry
# bench/gpu/bin). Everything lands in $OUT (default out/gpu), at most 7 files,
# the last being $OUT/DATE-h200.md (copy it to bench/gpu/results/).
#
#   bash bench/gpu/run.sh            the device run
#   bash bench/gpu/run.sh --dry-run  the same steps on a CPU machine: the GPU
#                                    tests skip, gpubench -cpu (exact flat on
#                                    the CPU) and a numpy stand-in for torch
#                                    play both sides at 20k/50k rows; checks
#                                    the script, the protocol and the summary
#
# Steps and their limits (seconds; override with the variables), estimated
# from the 2026-11-30 H200 run (tests 53 s, uploads 47 s, 9 timings):
#   env       T_ENV=20      nvidia-smi, nvcc, torch versions               ~5 s
#   cuda      T_CUDA=30     driver, buffers, GEMM, events (REQUIRE_GPU=1)  ~2 s
#   kernels   T_KERNELS=60  rls_topk, rls_scan*, rls_filter, rls_merge on the
#                           GPU against the Go references                  ~10 s
#   ann       T_ANN=130     GPUFlat against the exact flat oracle, every path,
#                           k 1…5,000, int8 (and the CPU simulations); the
#                           search canary on the GPU (TestGPUCanaryDevice,
#                           100,003 × 768 fp16 and int8) and on faulty
#                           reference devices (TestGPUCanaryFaults)         ~90 s
#   bench     T_BENCH=230   interleave.py: copy bandwidth, then for n in
#                           $SIZES both sides load (in parallel; ours also an
#                           int8 index of n rows for the path int8) and time
#                           batch $BATCHES × (rlsearch paths $PATHS, torch),
#                           $REPS rounds, after each load the search canary
#                           over the resident index (gpubench op canary: its
#                           startup cost at 1M, 5M, 21M; a mismatch is an
#                           error line and fails the run); then /retrieve
#                           c=32 at the largest n                          ~140 s
#   summary                 summary.py → $OUT/DATE-h200.md                  ~1 s
# Sum of the limits: 470 s (7.8 min); expected about 4.5 min.
set -uo pipefail
cd "$(dirname "$0")/../.."
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
OUT=${OUT:-out/gpu}
BIN=${BIN:-$PWD/bench/gpu/bin}
T_ENV=${T_ENV:-20} T_CUDA=${T_CUDA:-30} T_KERNELS=${T_KERNELS:-60} T_ANN=${T_ANN:-130} T_BENCH=${T_BENCH:-230}
SIZES=${SIZES:-1000000,5000000,21000000} BATCHES=${BATCHES:-1,64,512} REPS=${REPS:-7} MIN_MS=${MIN_MS:-50}
PATHS=${PATHS:-auto,tiled,segments,int8} HTTP_SECONDS=${HTTP_SECONDS:-8} COPY_MIB=${COPY_MIB:-4096}
PY=${PY:-python3}
OURS="$BIN/gpubench"
TORCH="$PY bench/gpu/torch_baseline.py --serve"
TESTS_CUDA=. TESTS_KERNELS=. TESTS_ANN=TestGPU
export REQUIRE_GPU=1
# The kernel emulator's tests (kernels/emu: nn.cu and scan.cu on the CPU)
# ran in CI; here they would need g++ and the source tree's path, and cost
# device time for nothing a GPU adds.
export RLSEARCH_SKIP_EMU=1
if [ $DRY = 1 ]; then
  SIZES=20000,50000 BATCHES=1,4,32 REPS=2 MIN_MS=5 HTTP_SECONDS=1 COPY_MIB=16
  [ -x /usr/bin/python3 ] && PY=/usr/bin/python3 # Debian's, with numpy
  OURS="$BIN/gpubench -cpu"
  TORCH="$PY bench/gpu/torch_baseline.py --serve --numpy"
  TESTS_CUDA='TestStreamsEventsGPU|TestDeviceRoundTrip' TESTS_KERNELS='TestScanKernelsGPU|TestKernelsGPU' TESTS_ANN='TestGPUDifferential|TestGPUCanary|TestSearchCanary'
  export REQUIRE_GPU=0
fi
for f in cuda.test kernels.test ann.test gpubench; do
  [ -x "$BIN/$f" ] || { echo "missing $BIN/$f: run bash bench/gpu/build.sh first"; exit 2; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/bench.jsonl"
status=0
t_all=$(date +%s)
steps=()
step_time() { steps+=("$1 $(( $(date +%s) - $2 )) s (limit $3 s)"); }

# cuBLAS from CUDA 13 often lives only in PyTorch's wheel (nvidia/cublas/lib), off the loader path.
if [ $DRY = 0 ] && [ -z "${RLSEARCH_CUBLAS_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
  site=$($PY -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  lib=$(find $site /usr/local /usr/lib /opt 2>/dev/null -name 'libcublas.so.1[123]' | head -n1)
  [ -n "$lib" ] && export RLSEARCH_CUBLAS_LIB=$lib LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
echo "cuBLAS: ${RLSEARCH_CUBLAS_LIB:-from the loader path}; dry run: $DRY"

t=$(date +%s)
timeout "$T_ENV" bash -c "echo gpu: \$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader); nvidia-smi; nvcc --version; $PY -c 'import torch; print(\"torch\", torch.__version__, torch.version.cuda)'; nproc; free -g" > "$OUT/env.txt" 2>&1
step_time env $t "$T_ENV"

run_test() { # pkg pattern timeout
  local pkg=$1 pat=$2 lim=$3 t rc
  t=$(date +%s)
  echo "== $pkg tests ($pat)"
  ( cd "$pkg" && timeout --kill-after=5 "$lim" "$BIN/$pkg.test" -test.run "$pat" -test.v -test.count=1 ) > "$OUT/test-$pkg.txt" 2>&1
  rc=$?
  grep -E '^(--- |ok|FAIL|PASS)' "$OUT/test-$pkg.txt" | tail -n 40
  [ $rc -eq 0 ] || { echo "!! $pkg tests failed (rc $rc$([ $rc -eq 124 ] && echo ', time limit')), see $OUT/test-$pkg.txt"; status=1; }
  step_time "$pkg-tests" $t "$lim"
}
run_test cuda "$TESTS_CUDA" "$T_CUDA"
run_test kernels "$TESTS_KERNELS" "$T_KERNELS"
run_test ann "$TESTS_ANN" "$T_ANN"

echo "== interleaved benchmark: n = $SIZES, batch = $BATCHES, paths $PATHS vs torch, $REPS rounds"
t=$(date +%s)
PYTHONUNBUFFERED=1 timeout --kill-after=10 "$T_BENCH" $PY bench/gpu/interleave.py --ours "$OURS" --torch "$TORCH" \
  --sizes "$SIZES" --batches "$BATCHES" --paths "$PATHS" --reps "$REPS" --min-ms "$MIN_MS" --copy-mib "$COPY_MIB" \
  --http-seconds "$HTTP_SECONDS" --out "$OUT/bench.jsonl" 2> "$OUT/bench-log.txt"
rc=$?
[ $rc -eq 0 ] || { echo "!! benchmark failed (rc $rc$([ $rc -eq 124 ] && echo ', time limit: partial results kept')), see $OUT/bench-log.txt"; status=1; }
grep -c '"kind": "time"' "$OUT/bench.jsonl" 2>/dev/null | sed 's/^/timings recorded: /'
grep -h '"kind": "canary"' "$OUT/bench.jsonl" 2>/dev/null | $PY -c 'import json,sys; [print("canary n=%d: %s" % (r["n"], r["summary"])) for r in map(json.loads, sys.stdin)]'
if grep -q '"what": "canary' "$OUT/bench.jsonl" 2>/dev/null; then echo "!! search canary failed, see $OUT/bench.jsonl"; status=1; fi
step_time bench $t "$T_BENCH"

date=$(date -u +%F)
res="$OUT/$date-h200.md"
[ $DRY = 1 ] && res="$OUT/$date-dry-run.md"
{
  echo "# GPU run, $date$([ $DRY = 1 ] && echo ' (DRY RUN on a CPU machine: the numbers mean nothing)')"
  echo
  echo "Device (name, driver, memory): $(grep -m1 '^gpu: ' "$OUT/env.txt" | cut -c6- || true); $(grep -m1 '^torch' "$OUT/env.txt" || true); cuBLAS ${RLSEARCH_CUBLAS_LIB:-from the loader path}."
  echo
  echo "Command: \`SIZES=$SIZES BATCHES=$BATCHES PATHS=$PATHS REPS=$REPS MIN_MS=$MIN_MS bash bench/gpu/run.sh$([ $DRY = 1 ] && echo ' --dry-run')\` (binaries from \`bench/gpu/build.sh\`, CGO_ENABLED=0). Exact top-10 over n × 768 fp16 unit vectors (path int8: n × 768 int8 codes, GPUConfig.Int8); ours = GPUFlat.Search, torch = \`torch.topk(q @ D.T)\`, both with results on the host; interleaved rounds, median of $REPS repetitions after two warm-up calls."
  echo
  echo "## Tests with REQUIRE_GPU=$REQUIRE_GPU"
  echo
  echo '```'
  for p in cuda kernels ann; do grep -E '^(--- |ok|FAIL|PASS)' "$OUT/test-$p.txt" | grep -v '^    ' ; done
  echo '```'
  echo
  echo "## Throughput"
  echo
  $PY bench/gpu/summary.py "$OUT/bench.jsonl"
  echo
  echo "## Steps"
  echo
  for s in "${steps[@]}"; do echo "- $s"; done
  echo "- total $(( $(date +%s) - t_all )) s"
} > "$res"
cat "$res"
exit $status
