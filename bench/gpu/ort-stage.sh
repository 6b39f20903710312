#!/usr/bin/env bash
# Brings ONNX Runtime 1.29.0's GPU build (make gpu-setup's .cache/ort-gpu: the core library, the provider bridge and
# the 230 MB CUDA provider) to the device machine, whose calls carry at most 64 MiB each (working tree included).
# Measured 2026-12-01: libonnxruntime_providers_cuda.so is 229,780,440 bytes, 164,939,946 with zstd -19 and
# 164,382,276 with xz -9 (its .nv_fatbin section, 166 MB of GPU code for six architectures, hardly compresses; the
# core library is 28,497,752 bytes, 7,956,084 with xz -9): it cannot travel in one call,
# so it travels in parts over several calls to one warm machine (it stays warm 30 s after a call).
#
#   bash bench/gpu/ort-stage.sh pack     (build machine) tar.xz of the three libraries, split into parts of
#                                        PART_MIB (default 52) MiB: bench/gpu/ort-parts/pN/{chunk.N,MANIFEST}
#                                        (git-ignored); prints the device calls to make
#   bash bench/gpu/ort-stage.sh stage    (device) copies the parts this call carries into $ORT_STAGE (default
#                                        /tmp/rlsearch-ort-gpu); once every part of MANIFEST is there, checks the
#                                        sha256 of each, joins and unpacks them into $ORT_STAGE/lib (python3's lzma
#                                        and tarfile: no xz binary needed) and prints ONNXRUNTIME_LIB=...
#
# One call per part: carry ["bench/gpu/ort-parts/pN"], command `bash bench/gpu/ort-stage.sh stage` (52 MiB + the
# 9.7 MB working tree: under the 64 MiB); then the run: carry ["bench/gpu/bin"] (32 MB), command
# `bash bench/gpu/inference.sh`, which runs stage first. Back to back: a machine idle 30 s is given back and the
# staged parts go with it. Where the parts never all arrive, inference.sh reports the ORT CUDA rows as not measured
# and runs the rest.
set -euo pipefail
cd "$(dirname "$0")/../.."
parts=bench/gpu/ort-parts
stage=${ORT_STAGE:-/tmp/rlsearch-ort-gpu}
case "${1:-}" in
pack)
  src=${ORT_GPU_DIR:-.cache/ort-gpu}
  for f in libonnxruntime.so.1 libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so; do
    [ -f "$src/$f" ] || { echo "ort-stage: missing $src/$f: run make gpu-setup"; exit 1; }
  done
  cache=.cache/ort-gpu-xz
  key=$(cat "$src/.complete" 2>/dev/null | sha256sum | cut -c1-16)
  tarxz=$cache/ort-gpu-$key.tar.xz
  if [ ! -s "$tarxz" ]; then  # xz -9 of 258 MB takes ~10 minutes on 2 cores: once per ORT version
    mkdir -p "$cache"
    echo "ort-stage: compressing $src (xz -9, once)" >&2
    tar -C "$src" -cf - libonnxruntime.so.1 libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so |
      xz -9 -T2 > "$tarxz.tmp"
    mv "$tarxz.tmp" "$tarxz"
  fi
  rm -rf "$parts"
  tmp=$(mktemp -d)
  split -b "${PART_MIB:-52}m" -d -a 1 "$tarxz" "$tmp/chunk."
  n=$(ls "$tmp" | wc -l)
  (cd "$tmp" && sha256sum chunk.*) > "$tmp/MANIFEST"
  for c in "$tmp"/chunk.*; do
    i=${c##*.}
    mkdir -p "$parts/p$i"
    mv "$c" "$parts/p$i/chunk.$i"
    cp "$tmp/MANIFEST" "$parts/p$i/MANIFEST"
  done
  rm -rf "$tmp"
  echo "ort-stage: $(du -b "$tarxz" | cut -f1) bytes in $n parts:" >&2
  du -b "$parts"/p*/chunk.* >&2
  echo "device calls, back to back: $(for i in $(seq 0 $((n - 1))); do printf 'carry [bench/gpu/ort-parts/p%s] + stage; ' "$i"; done)carry [bench/gpu/bin] + inference.sh" >&2
  ;;
stage)
  mkdir -p "$stage"
  for d in "$parts"/p*; do
    [ -d "$d" ] || continue
    cp "$d"/chunk.* "$d"/MANIFEST "$stage"/
  done
  if [ -f "$stage/lib/.complete" ]; then
    echo "ONNXRUNTIME_LIB=$stage/lib/libonnxruntime.so.1"
    exit 0
  fi
  [ -f "$stage/MANIFEST" ] || { echo "ort-stage: no parts here or in $stage" >&2; exit 2; }
  if ! (cd "$stage" && sha256sum -c --quiet MANIFEST) >&2 2>/dev/null; then
    echo "ort-stage: $(ls "$stage"/chunk.* 2>/dev/null | wc -l) of $(wc -l < "$stage/MANIFEST") parts in $stage so far" >&2
    exit 3
  fi
  rm -rf "$stage/lib.tmp"
  mkdir -p "$stage/lib.tmp"
  (cd "$stage" && cat $(awk '{print $2}' MANIFEST) > all.tar.xz)
  python3 -c 'import lzma, sys, tarfile
with lzma.open(sys.argv[1]) as x, tarfile.open(fileobj=x, mode="r|") as t:
    t.extractall(sys.argv[2])' "$stage/all.tar.xz" "$stage/lib.tmp"
  rm -f "$stage/all.tar.xz"
  touch "$stage/lib.tmp/.complete"
  mv "$stage/lib.tmp" "$stage/lib"
  rm -f "$stage"/chunk.*
  echo "ONNXRUNTIME_LIB=$stage/lib/libonnxruntime.so.1"
  ;;
*)
  echo "usage: bash bench/gpu/ort-stage.sh pack|stage"; exit 2 ;;
esac
