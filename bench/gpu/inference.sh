#!/usr/bin/env bash
# GPU inference check of issues 22 and 32 (E5 and Qwen3-Reranker on our fp16
# forward pass, ONNX Runtime's CUDA execution provider, PyTorch eager and
# torch.compile), for the device machine: NVIDIA GPU, driver, python3 with
# torch, transformers and safetensors, no Go toolchain. Run from the
# repository root after `bash bench/gpu/build.sh inference` on the build
# machine (carry bench/gpu/bin; ONNX Runtime's GPU build arrives in parts
# first, see bench/gpu/ort-stage.sh). Everything lands in $OUT (default
# out/gpu-inference), eight files (the most the device tool returns): log.txt,
# parity.json, go_timing.json, torch_timing.json, ort.jsonl (its first line
# is export.json), e2e.jsonl, e2e-log.txt and DATE-h200-inference.md (copy it
# to bench/gpu/results/ and commit). Every step writes as it goes: a run cut
# short leaves what ran.
#
# Steps and their time limits in seconds (override with the variables; the
# sum, 480 s = 8 min, is the worst case and fits one device call):
#   0. (no limit; seconds) the environment: GPU, driver, torch.version.cuda,
#                    the nvidia/*/lib folders of PyTorch's wheels (their CUDA
#                    13 runtime, cuBLAS, cuRAND go into RLSEARCH_CUDA_LIB_PATH
#                    and LD_LIBRARY_PATH), ONNX Runtime's GPU build
#                    (ort-stage.sh stage, else $ORT_GPU_DIR, else a pip
#                    onnxruntime-gpu on the device).
#   1. T_TESTS=45    GPU tests with REQUIRE_GPU=1: cuda (GEMM, Acquire),
#                    kernels (every nn.cu kernel vs its Go reference),
#                    transformer (both forward passes vs the float32
#                    references, batch vs single).
#   2. T_BUILD=65    inference.py build: random HF BertModel (bert-base) and
#                    Qwen3ForCausalLM (0.6B) on the GPU, seed 1, safetensors,
#                    PyTorch fp32 outputs of mixed-length inputs.
#   3. T_PARITY=40   TestDeviceParity: ours vs those (cosine >= 0.999, P(yes)
#                    within 2e-3, batch vs one at a time <= 1e-3).
#   4. T_GO=55       TestDeviceTiming: E5-base 512x32, 128x256, 1x32; Qwen3
#                    0.6B and 4B shapes 256 pairs x 512 tokens.
#   5. T_TORCH=75    inference.py time: the same in PyTorch fp16, eager, then
#                    torch.compile while the budget lasts.
#   6. T_EXPORT=45   inference.py export: step 2's models as ONNX (E5 fp16
#                    and fp32, Qwen3 0.6B fp16; the 4B shape while time is
#                    left) for ONNX Runtime.
#   7. T_ORT=70      gpubench "model" through embed.Open / rerank.Open: the
#                    model canary on the device for our forward (gpu) and
#                    ORT's CUDA provider (cuda), parity against step 2's
#                    PyTorch fp32 outputs, ORT CUDA timing of step 4's
#                    workloads; the report says which engine auto would pick.
#   8. T_E2E=75      /retrieve with E5 end to end (gpubench "e2e"): the step 2
#                    bert-base model as an E5 model directory (bert-base-uncased
#                    tokenizer, "query: " prefix, mean pooling) on the GPU
#                    (embed provider gpu, its canary included) over a GPU
#                    index of E2E_N (21,000,000) generated 768-d vectors:
#                    batches of 512 queries × 32 tokens, directly and over
#                    HTTP; single-query requests at concurrency 32 through
#                    the batching queue.
#   9. T_SUMMARY=10  the Markdown report.
#
# DRY_RUN=1 (a machine without a GPU, e.g. the build machine): builds the
# binaries, runs the tests on the CPU emulator of kernels/nn.cu, writes the
# step 2 and 6 files from the tiny generated models and numpy references
# (inference.py dryrun-build, no torch), runs steps 3 and 4 emulated (tiny
# timing shapes), skips step 5, runs step 7 with go run (ONNX Runtime on the
# CPU for the rows; provider cuda must fail naming what is missing), step 8
# with gpubench -cpu (exact flat search over 20,000 rows, `make testmodel` on
# ONNX Runtime, batch 64), and writes the report marked DRY RUN: it checks
# the script, the binaries and the file plumbing, not the GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/gpu-inference}
DRY_RUN=${DRY_RUN:-0}
WORK=${WORK:-/tmp/rlsearch-infer}
BIN=$PWD/bench/gpu/bin
# The dry run checks plumbing on a build machine, where the kernel emulator is far slower than a GPU and the cores
# are shared: its limits are the device's times DRY_SCALE (default 10) unless set.
x=1; [ "$DRY_RUN" = 1 ] && x=${DRY_SCALE:-10}
T_TESTS=${T_TESTS:-$((45 * x))} T_BUILD=${T_BUILD:-$((65 * x))} T_PARITY=${T_PARITY:-$((40 * x))} T_GO=${T_GO:-$((55 * x))}
T_TORCH=${T_TORCH:-75} T_EXPORT=${T_EXPORT:-45} T_ORT=${T_ORT:-$((70 * x))} T_E2E=${T_E2E:-$((75 * x))} T_SUMMARY=${T_SUMMARY:-$((10 * x))}
E2E_N=${E2E_N:-21000000}
PY=${PY:-python3}
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/log.txt
: > "$LOG"
: > "$OUT/e2e-log.txt"
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

step "0. environment"
# The CUDA 13 libraries of PyTorch's wheels (site-packages/nvidia/*/lib): cuBLAS for our forward pass (package cuda),
# and libcudart.so.13, libcublas(Lt).so.13, libcurand.so.10 for ONNX Runtime's CUDA provider (internal/ortenv).
nvlibs=""
if [ "$DRY_RUN" != 1 ]; then
  nvlibs=$($PY -c 'import glob, os, site
dirs = []
for s in site.getsitepackages():
    dirs += sorted(d for d in glob.glob(os.path.join(s, "nvidia", "*", "lib")) if os.path.isdir(d))
print(":".join(dirs))' 2>/dev/null || true)
  if [ -n "$nvlibs" ]; then
    export RLSEARCH_CUDA_LIB_PATH=$nvlibs LD_LIBRARY_PATH=$nvlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  if [ -z "${RLSEARCH_CUBLAS_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
    lib=$(IFS=:; for d in $nvlibs; do ls "$d"/libcublas.so.1[123] 2>/dev/null; done | head -n1)
    [ -z "$lib" ] && lib=$(find /usr/local /usr/lib /opt 2>/dev/null -name 'libcublas.so.1[123]' | head -n1)
    [ -n "$lib" ] && export RLSEARCH_CUBLAS_LIB=$lib
  fi
fi
# ONNX Runtime's GPU build: staged parts (ort-stage.sh), $ORT_GPU_DIR, or a pip onnxruntime-gpu on the device.
ortlib=""
if [ "$DRY_RUN" = 1 ]; then
  ortlib=${ONNXRUNTIME_LIB:-$PWD/.cache/ort/libonnxruntime.so.1}
  ortfrom="dry run: the CPU build of scripts/setup.sh (provider cuda must fail naming what is missing)"
elif line=$(bash bench/gpu/ort-stage.sh stage 2>> "$LOG"); then
  ortlib=${line#ONNXRUNTIME_LIB=}
  ortfrom="bench/gpu/ort-stage.sh (make gpu-setup's ORT 1.29.0 GPU build, carried in parts)"
elif [ -n "${ORT_GPU_DIR:-}" ] && [ -f "$ORT_GPU_DIR/libonnxruntime.so.1" ]; then
  ortlib=$ORT_GPU_DIR/libonnxruntime.so.1
  ortfrom="\$ORT_GPU_DIR"
else
  capi=$($PY -c 'import glob, os, site
for s in site.getsitepackages():
    for p in glob.glob(os.path.join(s, "onnxruntime", "capi", "libonnxruntime_providers_cuda.so")):
        print(os.path.dirname(p)); raise SystemExit' 2>/dev/null || true)
  lib=$(ls "$capi"/libonnxruntime.so* 2>/dev/null | head -n1)
  if [ -n "$capi" ] && [ -n "$lib" ]; then
    ortlib=$lib
    ortfrom="the device's pip onnxruntime-gpu ($capi)"
  fi
fi
[ -n "$ortlib" ] && export ONNXRUNTIME_LIB=$ortlib
{
  echo "env: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
  echo "env: $($PY -c 'import torch, transformers; print("torch", torch.__version__, "torch.version.cuda", torch.version.cuda, "transformers", transformers.__version__)' 2>/dev/null || echo 'torch/transformers not importable')"
  echo "env: nvidia/*/lib folders of the PyTorch wheels: ${nvlibs:-none found}"
  echo "env: cuBLAS ${RLSEARCH_CUBLAS_LIB:-from the loader path}"
  echo "env: ONNX Runtime ${ortlib:-not found: ORT CUDA rows not measured (bench/gpu/ort-stage.sh carries it)}${ortlib:+ ($ortfrom)}"
  echo "env: $(uname -m), $(nproc) CPUs, $(ldd --version 2>/dev/null | head -n1), dry run $DRY_RUN"
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

# Model directories for the serving code: step 2's safetensors with tokenizer.json and rlsearch.json.
serve_dirs() {
  mkdir -p "$WORK/e5" "$WORK/qwen06-serve"
  for f in model.safetensors config.json; do
    [ -f "$WORK/bert/$f" ] && ln -sf "$WORK/bert/$f" "$WORK/e5/"
    [ -f "$WORK/qwen06/$f" ] && ln -sf "$WORK/qwen06/$f" "$WORK/qwen06-serve/"
  done
  cp "$BIN/bert-uncased.json" "$WORK/e5/tokenizer.json"
  $PY -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$BIN/qwen3.json.xz" "$WORK/qwen3-tokenizer.json"
  cp "$WORK/qwen3-tokenizer.json" "$WORK/qwen06-serve/tokenizer.json"
  local dim=768
  [ "$DRY_RUN" = 1 ] && dim=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["hidden_size"])' "$WORK/bert/config.json")
  echo '{"name": "e5-base", "dim": '"$dim"', "max_length": 512, "query_prefix": "query: ", "passage_prefix": "passage: ", "pooling": "mean"}' > "$WORK/e5/rlsearch.json"
  echo '{"kind": "qwen3-reranker", "name": "qwen3-reranker-0.6b", "max_length": 8192}' > "$WORK/qwen06-serve/rlsearch.json"
}
serve_dirs 2>> "$LOG" || fail "model directories for the serving code"

step "6. ONNX exports"
if [ "$DRY_RUN" = 1 ]; then
  echo "dry run: the tiny models' own ONNX graphs (dryrun-build)" | tee -a "$LOG"
elif [ -z "$ortlib" ]; then
  echo '{"all": {"skipped": "no ONNX Runtime GPU build on the device"}}' > "$WORK/export.json"
  echo "no ONNX Runtime GPU build: exports skipped" | tee -a "$LOG"
else
  PYTHONUNBUFFERED=1 timeout "$T_EXPORT" $PY bench/gpu/inference.py export --work "$WORK" --deadline $((T_EXPORT - 5)) \
    --bert-tokenizer "$BIN/bert-uncased.json" --qwen-tokenizer "$WORK/qwen3-tokenizer.json" >> "$LOG" 2>&1 ||
    fail "inference.py export failed or ran out of time (export.json says what was exported)"
fi

# The canary's CPU reference for our forward pass: ONNX Runtime on the CPU over the exported graph of the same
# weights when there is one (seconds), else package transformer's float32 Go forward (slower at the 0.6B shape).
if [ "$DRY_RUN" != 1 ]; then
  [ -f "$WORK/e5-onnx-fp32/model.onnx" ] && ln -sf "$WORK/e5-onnx-fp32/model.onnx" "$WORK/e5/model.onnx"
  if [ -f "$WORK/qwen06-onnx-fp16/model.onnx" ]; then
    ln -sf "$WORK/qwen06-onnx-fp16/model.onnx" "$WORK/qwen06-serve/model.onnx"
    echo '{"kind": "qwen3-reranker", "name": "qwen3-reranker-0.6b", "max_length": 8192, "inputs": ["input_ids", "attention_mask", "position_ids"]}' > "$WORK/qwen06-serve/rlsearch.json"
  fi
fi

step "7. the models through the serving code: model canary, ORT CUDA"
model_cmds() { # one gpubench "model" command per line (JSON built by Python: any path)
  $PY -c 'import json, os, sys
work, dry = sys.argv[1], sys.argv[2] == "1"
cuda = "cpu" if dry else "cuda"
e5w, qw = ([[4, 8], [2, 16], [1, 8]], [[2, 16]]) if dry else ([[512, 32], [128, 256], [1, 32]], [[256, 512]])
exp = json.load(open(os.path.join(work, "export.json"))) if os.path.exists(os.path.join(work, "export.json")) else {}
def cmd(**kw):
    print(json.dumps(dict(op="model", seconds=1 if dry else 2, **kw)))
# Ours through the serving code: the canary on the device, parity (timing rows: TestDeviceTiming). The dry run
# has no GPU: the same commands on ONNX Runtime on the CPU over the tiny models ONNX graphs.
cmd(kind="e5", name="e5-base", model=os.path.join(work, "e5-onnx-fp32" if dry else "e5"), provider="cpu" if dry else "gpu", parity=work, workloads=[])
cmd(kind="qwen3", name="qwen3-reranker-0.6b", model=os.path.join(work, "qwen06-onnx-fp16" if dry else "qwen06-serve"), provider="cpu" if dry else "gpu",
    parity=work, workloads=[])
if dry:  # the cuda provider on a machine that cannot run it: an error naming what is missing
    cmd(kind="e5", name="e5-base", model=os.path.join(work, "e5-onnx-fp32"), provider="cuda", workloads=[], mode="fp32 export")
for key, kind, name, mode, w in (("e5-onnx-fp16", "e5", "e5-base", "fp16 export", e5w), ("e5-onnx-fp32", "e5", "e5-base", "fp32 export", e5w[:1]),
                                 ("qwen06-onnx-fp16", "qwen3", "qwen3-reranker-0.6b", "fp16 export", qw), ("qwen4b-onnx-fp16", "qwen3", "qwen3-reranker-4b", "fp16 export", qw)):
    if "dir" in exp.get(key, {}):
        # The 4B row skips the canary: its CPU reference (ONNX Runtime on 8 GB of fp16 weights) would take ~30 s.
        cmd(kind=kind, name=name, model=exp[key]["dir"], provider=cuda, mode=mode, workloads=w,
            parity=work if key in ("e5-onnx-fp16", "qwen06-onnx-fp16") else "", canary=key != "qwen4b-onnx-fp16")
print(json.dumps({"op": "quit"}))' "$WORK" "$DRY_RUN"
}
$PY -c 'import json, sys; print(json.dumps({"op": "export", "export": json.load(open(sys.argv[1]))}))' "$WORK/export.json" > "$OUT/ort.jsonl" 2>> "$LOG" ||
  echo '{"op": "export", "export": {}}' > "$OUT/ort.jsonl"
if [ "$DRY_RUN" = 1 ]; then
  model_cmds | ONNXRUNTIME_LIB=$ortlib timeout "$T_ORT" go run ./bench/gpu/gpubench -cpu >> "$OUT/ort.jsonl" 2>> "$OUT/e2e-log.txt" || fail "model step failed, see e2e-log.txt"
  grep -q 'CUDA execution provider is unavailable' "$OUT/ort.jsonl" || fail "dry run: provider cuda did not fail naming what is missing"
elif [ -f "$WORK/bert/model.safetensors" ]; then
  model_cmds | timeout "$T_ORT" "$BIN/gpubench" >> "$OUT/ort.jsonl" 2>> "$OUT/e2e-log.txt" || fail "model step failed or ran out of time, see e2e-log.txt"
fi
# Errors (the cuda line of the dry run is meant to be one), failed canaries and failed parity are reported.
$PY -c 'import json, sys
dry, bad = sys.argv[2] == "1", []
for l in open(sys.argv[1]):
    r = json.loads(l) if l.strip().startswith("{") else {}
    if r.get("op") != "model":
        continue
    if "error" in r:
        print("model %s %s: %s" % (r.get("name"), r.get("provider"), r["error"]))
        bad += [] if dry and "CUDA execution provider is unavailable" in r["error"] else ["error"]
    c, p = r.get("canary") or {}, r.get("parity") or {}
    if c.get("ran") and not c.get("passed"):
        bad.append("model canary failed: %s %s: %s" % (r.get("name"), r.get("provider"), c.get("failure")))
    if p and not p.get("pass", True) and not dry:
        bad.append("parity: %s %s: %s" % (r.get("name"), r.get("provider"), p))
for b in bad:
    print("!!", b)
sys.exit(1 if bad else 0)' "$OUT/ort.jsonl" "$DRY_RUN" >> "$LOG" 2>&1 || fail "the model step found errors, failed canaries or parity (log above)"

step "8. /retrieve end to end (E5 on the GPU + GPU top-k)"
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
  e2e_cmds 20000 "$dim" "$model" 64 2 1 | ONNXRUNTIME_LIB=$ortlib \
    timeout "$T_E2E" go run ./bench/gpu/gpubench -cpu > "$OUT/e2e.jsonl" 2>> "$OUT/e2e-log.txt" || fail "e2e failed, see e2e-log.txt"
elif [ -f "$WORK/bert/model.safetensors" ] && [ -f "$WORK/bert/config.json" ]; then
  e2e_cmds "$E2E_N" 768 "$WORK/e5" 512 7 6 | timeout "$T_E2E" "$BIN/gpubench" > "$OUT/e2e.jsonl" 2>> "$OUT/e2e-log.txt" || fail "e2e failed or ran out of time, see e2e-log.txt"
else
  fail "no $WORK/bert model from step 2: e2e skipped"
fi
if grep -q '"error"' "$OUT/e2e.jsonl" 2>/dev/null; then
  grep -h '"error"' "$OUT/e2e.jsonl" >> "$LOG"
  fail "e2e answered an error (above)"
fi

step "9. summary"
report=$OUT/$(date +%F)-h200-inference.md
dry=""; [ "$DRY_RUN" = 1 ] && dry=--dry
timeout "$T_SUMMARY" $PY bench/gpu/inference.py summary --out-dir "$OUT" --log "$LOG" --out "$report" $dry > /dev/null 2>> "$LOG" || fail "summary failed"
echo "total $(( $(date +%s) - start )) s, status $status" | tee -a "$LOG"
[ -f "$report" ] && tail -n 40 "$report"
exit $status
