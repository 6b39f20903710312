#!/usr/bin/env bash
# Builds what bench/gpu/run.sh and inference.sh run on the device machine
# (x86-64 Linux, no Go toolchain there) into bench/gpu/bin (git-ignored): the
# test binaries of cuda, kernels, ann and transformer, and gpubench
# (bench/gpu/gpubench). `build.sh inference` builds only what inference.sh
# needs (cuda, kernels, transformer, gpubench, the BERT tokenizer and the
# Qwen3 tokenizer xz-compressed), so that the working tree plus the binaries
# stay well under the 64 MiB the device tool carries. ONNX Runtime's GPU
# build does not fit beside them: bench/gpu/ort-stage.sh carries it in parts.
#
# CGO_ENABLED=0: purego binds libcuda/libcublas and ONNX Runtime's C API
# (internal/ortenv/ort_purego.go) without cgo, so the binaries need nothing of
# the device's glibc beyond unversioned symbols (readelf -V shows no version
# needs), while a cgo build made here needs GLIBC_2.34 (Debian 12's glibc
# 2.36 stamps __libc_start_main, pthread_* and dl* at 2.34) and ONNX Runtime
# 1.29.0 itself needs GLIBC_2.28: the static build runs wherever ORT does
# (bench/gpu/README.md). Stripped (-s -w).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/gpu/bin
pkgs=(cuda kernels ann transformer)
[ "${1:-}" = inference ] && pkgs=(cuda kernels transformer)
for p in "${pkgs[@]}"; do
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags='-s -w' -o bench/gpu/bin/$p.test ./$p
done
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags='-s -w' -o bench/gpu/bin/gpubench ./bench/gpu/gpubench
if [ "${1:-}" = inference ]; then
  # The random E5-base-shaped model gets bert-base-uncased's tokenizer (E5's); the Qwen3 models Qwen3's (11 MB,
  # carried xz-compressed: inference.sh unpacks it with python3's lzma).
  for tok in .cache/tokenizers/bert-uncased.json .cache/tokenizers/qwen3.json; do
    [ -f "$tok" ] || { echo "missing $tok: run scripts/setup.sh (make setup)"; exit 1; }
  done
  cp .cache/tokenizers/bert-uncased.json bench/gpu/bin/bert-uncased.json
  xz -9 -c .cache/tokenizers/qwen3.json > bench/gpu/bin/qwen3.json.xz
fi
du -ch bench/gpu/bin/*
