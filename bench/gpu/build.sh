#!/usr/bin/env bash
# Builds what bench/gpu/run.sh and inference.sh run on the device machine
# (x86-64 Linux, no Go toolchain there) into bench/gpu/bin (git-ignored): the
# test binaries of cuda, kernels, ann and transformer, and gpubench
# (bench/gpu/gpubench). `build.sh inference` builds only what inference.sh
# needs (cuda, kernels, transformer, gpubench and the BERT tokenizer: about
# 30 MB), so that the working tree plus the binaries stay well under the
# 64 MiB the device tool carries.
# CGO_ENABLED=0: purego binds libcuda/libcublas without cgo, so the binaries
# are static and independent of the device's glibc. Stripped (-s -w).
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
  # inference.sh's end-to-end step gives the random E5-base-shaped model bert-base-uncased's tokenizer (E5's).
  tok=.cache/tokenizers/bert-uncased.json
  [ -f "$tok" ] || { echo "missing $tok: run scripts/setup.sh (make setup)"; exit 1; }
  cp "$tok" bench/gpu/bin/bert-uncased.json
fi
du -ch bench/gpu/bin/*
