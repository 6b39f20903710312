#!/usr/bin/env bash
# Builds what bench/gpu/run.sh runs on the device machine (x86-64 Linux, no
# Go toolchain there) into bench/gpu/bin (git-ignored): the test binaries of
# cuda, kernels and ann, and gpubench (bench/gpu/gpubench). CGO_ENABLED=0:
# purego binds libcuda/libcublas without cgo, so the binaries are static and
# independent of the device's glibc. Stripped (-s -w) to stay well under the
# 64 MiB the device tool carries (about 45 MB together).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/gpu/bin
for p in cuda kernels ann; do
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags='-s -w' -o bench/gpu/bin/$p.test ./$p
done
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags='-s -w' -o bench/gpu/bin/gpubench ./bench/gpu/gpubench
du -ch bench/gpu/bin/*
