#!/usr/bin/env bash
# GPU inference check of issue 22 (E5 and Qwen3-Reranker on our fp16 forward
# pass), for the device machine: NVIDIA GPU, driver, cuBLAS, python3 with
# torch, transformers and safetensors, no Go toolchain. Run from the
# repository root after `bash bench/gpu/build.sh inference` on the build machine
# (carry bench/gpu/bin). Everything lands in $OUT (default out/gpu-inference),
# seven files: log.txt, parity.json, go_timing.json, torch_timing.json,
# e2e.jsonl, e2e-log.txt and DATE-h200-inference.md (copy it to
# bench/gpu/results/ and commit).
#
# Steps and their time limits in seconds (override with the variables; the
# sum, 480 s, is the worst case; expected about 5 minutes):
#   1. T_TESTS=60    GPU tests with REQUIRE_GPU=1, each binary under the limit:
#                    cuda (GEMM, Acquire), kernels (every nn.cu kernel vs its Go
#                    reference), transformer (both forward passes vs the float32
#                    references, batch vs single).
#   2. T_BUILD=80    inference.py build: random HF BertModel (bert-base) and
#                    Qwen3ForCausalLM (0.6B) on the GPU, seed 1, safetensors,
#                    PyTorch fp32 outputs of mixed-length inputs.
#   3. T_PARITY=50   TestDeviceParity: ours vs those (cosine >= 0.999, P(yes)
#                    within 2e-3, batch vs one at a time <= 1e-3).
#   4. T_GO=65       TestDeviceTiming: E5-base 512x32, 128x256, 1x32; Qwen3
#                    0.6B and 4B shapes 256 pairs x 512 tokens.
#   5. T_TORCH=125   inference.py time: the same in PyTorch fp16, eager, then
#                    torch.compile while the budget lasts.
#   6. T_E2E=90      /retrieve with E5 end to end (gpubench "e2e"): the step 2
#                    bert-base model as an E5 model directory (bert-base-uncased
#                    tokenizer, "query: " prefix, mean pooling) on the GPU
#                    (embed provider gpu) over a GPU index of E2E_N (21,000,000)
#                    generated 768-d vectors: batches of 512 queries × 32
#                    tokens, directly and over HTTP; single-query requests at
#                    concurrency 32 through the batching queue.
#   7. T_SUMMARY=10  the Markdown report.
#
# DRY_RUN=1 (a machine without a GPU, e.g. the build machine): builds the
# binaries, runs the tests on the CPU emulator of kernels/nn.cu, writes the
# step 2 files from the tiny generated models and numpy references
# (inference.py dryrun-build, no torch), runs steps 3 and 4 emulated (tiny
# timing shapes), skips step 5, runs step 6 with gpubench -cpu (go run: exact
# flat search over 20,000 rows, `make testmodel` on ONNX Runtime, batch 64),
# and writes the report marked DRY RUN: it
# checks the script, the binaries and the file plumbing, not the GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/gpu-inference}
DRY_RUN=${DRY_RUN:-0}
WORK=${WORK:-/tmp/rlsearch-infer}
BIN=$PWD/bench/gpu/bin
T_TESTS=${T_TESTS:-60} T_BUILD=${T_BUILD:-80} T_PARITY=${T_PARITY:-50} T_GO=${T_GO:-65} T_TORCH=${T_TORCH:-125} T_E2E=${T_E2E:-90} T_SUMMARY=${T_SUMMARY:-10}
E2E_N=${E2E_N:-21000000}
PY=${PY:-python3}
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/log.txt
: > "$LOG"
status=0
step() { echo "== $* ($(date +%T))" | tee -a "$LOG"; }
fail() { echo "!! $*" | tee -a "$LOG"; status=1; }

if [ "$DRY_RUN" = 1 ]; then
  PY=/usr/bin/python3
  step "dry run: building the test binaries (bench/gpu/build.sh)"
  bash bench/gpu/build.sh inference >> "$LOG" 2>&1 || { fail "build.sh failed"; exit 1; }
  export RLSEARCH_INFER_EMU=1
else
  export REQUIRE_GPU=1 RLSEARCH_SKIP_EMU=1
fi
for b in cuda kernels transformer gpubench; do
  f=$BIN/$b.test; [ $b = gpubench ] && f=$BIN/gpubench
  [ -x "$f" ] || { fail "missing $f: run bash bench/gpu/build.sh inference on the build machine and carry bench/gpu/bin"; exit 1; }
done

# cuBLAS from CUDA 13 often lives only in PyTorch's wheel (nvidia/cublas/lib), off the loader path.
if [ "$DRY_RUN" != 1 ] && [ -z "${RLSEARCH_CUBLAS_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
  site=$($PY -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  lib=$(find $site /usr/local /usr/lib /opt 2>/dev/null -name 'libcublas.so.1[123]' | head -n1)
  [ -n "$lib" ] && export RLSEARCH_CUBLAS_LIB=$lib LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{
  echo "env: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
  echo "env: cuBLAS ${RLSEARCH_CUBLAS_LIB:-from the loader path}"
  echo "env: $($PY -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' 2>/dev/null || echo 'torch/transformers not importable')"
  echo "env: $(uname -m), $(nproc) CPUs, dry run $DRY_RUN"
} | tee -a "$LOG"

gotest() { # timeout binary pkgdir run-pattern [env...]
  local t=$1 bin=$2 dir=$3 pat=$4
  shift 4
  ( cd "$dir" && env "$@" timeout "$t" "$BIN/$bin.test" -test.run "$pat" -test.v -test.count=1 ) > "$OUT/.go.txt" 2>&1
  local rc=$?
  grep -E '^(--- |ok|FAIL|PASS|panic)' "$OUT/.go.txt" | grep -v '^    ' >> "$LOG"
  grep -E '(device_test|gpu_test|nn_test|gemm_test)\.go:[0-9]+:' "$OUT/.go.txt" >> "$LOG"
  [ $rc -eq 0 ] || { tail -n 30 "$OUT/.go.txt" >> "$LOG"; fail "$bin tests failed (rc $rc)"; }
  rm -f "$OUT/.go.txt"
  return $rc
}

start=$(date +%s)
step "1. GPU tests"
if [ "$DRY_RUN" = 1 ]; then
  gotest "$T_TESTS" kernels kernels 'TestAttention|TestRMSNorm'
  gotest "$T_TESTS" transformer transformer 'TestQwen3GPUMatchesRef'
else
  # Only this issue's tests: the top-k kernels of scan.cu/topk.cu have their own device run (run.sh).
  gotest "$T_TESTS" cuda cuda 'TestNoDevicePath|TestGemm|TestAcquire'
  gotest "$T_TESTS" kernels kernels '^(TestEmbedLN|TestBiasLN|TestBiasGELU|TestRMSNorm|TestQKNormRoPE|TestSwiGLU|TestGathersDotPool|TestAttention|TestNNLaunchArgsMatchPTX)$'
  gotest "$T_TESTS" transformer transformer 'GPU|BatchChunks'
fi

step "2. models and PyTorch fp32 references"
if [ "$DRY_RUN" = 1 ]; then
  timeout "$T_BUILD" $PY bench/gpu/inference.py dryrun-build --work "$WORK" >> "$LOG" 2>&1 || fail "dryrun-build failed"
else
  PYTHONUNBUFFERED=1 timeout "$T_BUILD" $PY bench/gpu/inference.py build --work "$WORK" >> "$LOG" 2>&1 || fail "inference.py build failed"
fi

step "3. parity"
if [ -f "$WORK/torch_ref.json" ]; then
  gotest "$T_PARITY" transformer transformer '^TestDeviceParity$' RLSEARCH_INFER_DIR="$WORK" RLSEARCH_INFER_OUT="$OUT"
else
  fail "no $WORK/torch_ref.json: parity skipped"
fi

step "4. rlsearch timing"
gotest "$T_GO" transformer transformer '^TestDeviceTiming$' RLSEARCH_INFER_TIMING=1 RLSEARCH_INFER_OUT="$OUT"

step "5. PyTorch timing"
if [ "$DRY_RUN" = 1 ]; then
  echo "dry run: PyTorch timing skipped" | tee -a "$LOG"
  echo '[]' > "$OUT/torch_timing.json"
else
  PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=$(nproc) timeout "$T_TORCH" $PY bench/gpu/inference.py time \
    --out "$OUT/torch_timing.json" --deadline $((T_TORCH - 10)) >> "$LOG" 2>&1 || fail "inference.py time failed or ran out of time (rows measured so far are kept)"
fi

step "6. /retrieve end to end (E5 on the GPU + GPU top-k)"
e2e_cmds() { # n dim model batch reps seconds: gpubench's commands (JSON built by Python: any model path)
  $PY -c 'import json, sys
n, dim, model, batch, reps, secs = sys.argv[1:7]
print(json.dumps({"op": "load", "n": int(n), "dim": int(dim), "seed": 1}))
print(json.dumps({"op": "e2e", "model": model, "batch": int(batch), "tokens": 32, "reps": int(reps), "concurrency": 4,
                  "single_concurrency": 32, "seconds": float(secs), "topk": 3}))
print(json.dumps({"op": "quit"}))' "$@"
}
if [ "$DRY_RUN" = 1 ]; then
  model=$(make -s testmodel 2>> "$LOG") || fail "make testmodel failed"
  dim=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1] + "/rlsearch.json"))["dim"])' "$model")
  e2e_cmds 20000 "$dim" "$model" 64 2 1 | ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.cache/ort/libonnxruntime.so.1} \
    timeout "$T_E2E" go run ./bench/gpu/gpubench -cpu > "$OUT/e2e.jsonl" 2> "$OUT/e2e-log.txt" || fail "e2e failed, see e2e-log.txt"
elif [ -f "$WORK/bert/model.safetensors" ] && [ -f "$WORK/bert/config.json" ]; then
  model=$WORK/e5
  mkdir -p "$model"
  ln -sf "$WORK/bert/model.safetensors" "$WORK/bert/config.json" "$model/"
  cp "$BIN/bert-uncased.json" "$model/tokenizer.json"
  echo '{"name": "e5-base-shape (random weights, inference.py build)", "dim": 768, "max_length": 512, "query_prefix": "query: ", "passage_prefix": "passage: ", "pooling": "mean"}' > "$model/rlsearch.json"
  e2e_cmds "$E2E_N" 768 "$model" 512 7 6 | timeout "$T_E2E" "$BIN/gpubench" > "$OUT/e2e.jsonl" 2> "$OUT/e2e-log.txt" || fail "e2e failed or ran out of time, see e2e-log.txt"
else
  fail "no $WORK/bert model from step 2: e2e skipped"
fi
if grep -q '"error"' "$OUT/e2e.jsonl" 2>/dev/null; then
  grep -h '"error"' "$OUT/e2e.jsonl" >> "$LOG"
  fail "e2e answered an error (above)"
fi

step "7. summary"
report=$OUT/$(date +%F)-h200-inference.md
dry=""; [ "$DRY_RUN" = 1 ] && dry=--dry
timeout "$T_SUMMARY" $PY bench/gpu/inference.py summary --out-dir "$OUT" --log "$LOG" --out "$report" $dry > /dev/null 2>> "$LOG" || fail "summary failed"
echo "total $(( $(date +%s) - start )) s, status $status" | tee -a "$LOG"
[ -f "$report" ] && tail -n 25 "$report"
exit $status
