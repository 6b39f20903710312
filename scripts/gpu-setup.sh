#!/usr/bin/env bash
# ONNX Runtime 1.29.0 with the CUDA execution provider, for GPU nodes (`make gpu-setup`; not part of setup or test:
# ~330 MB of downloads). Fetches two npm packages with `npm pack` (no install scripts run), checks each tarball
# against the npm registry's dist.integrity (sha512) pinned below, and unpacks the three libraries the CUDA
# provider needs into .cache/ort-gpu/:
#
#   libonnxruntime.so.1                  ORT 1.29.0 core, built with the provider bridge (soname libonnxruntime.so.1;
#                                        RUNPATH $ORIGIN, so the providers beside it are found)
#   libonnxruntime_providers_shared.so   the bridge between the core and a provider library
#   libonnxruntime_providers_cuda.so     the CUDA execution provider (230 MB; NEEDED libcudart.so.13,
#                                        libcublas.so.13, libcublasLt.so.13, libcurand.so.10, libcuda.so.1; cuDNN is
#                                        loaded lazily)
#
# Packages (npm, version 0.4.9 of github.com/asus4/onnxruntime-unity):
#   com.github.asus4.onnxruntime             Plugins/Linux/x64/libonnxruntime.so, libonnxruntime_providers_shared.so
#   com.github.asus4.onnxruntime.linux-x64-gpu  Plugins/Linux/x64/libonnxruntime_providers_cuda.so
#
# The CUDA 13 runtime libraries are not part of these packages: on a GPU node they come with the CUDA 13 toolkit
# or with PyTorch's pip wheels (site-packages/nvidia/{cuda_runtime,cublas,curand}/lib); see embed/README.md.
#
# Idempotent: a complete .cache/ort-gpu (the stamp file names the pinned integrities) is left alone. Atomic: the
# libraries are unpacked into a temporary directory beside it and renamed into place, so an interrupted run
# leaves either the old directory or none.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${ORT_GPU_DIR:-$PWD/.cache/ort-gpu}

# name@version and its dist.integrity (`npm view NAME@VERSION dist.integrity`, read 2026-12-01).
pkgs=(
  "com.github.asus4.onnxruntime@0.4.9 sha512-BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg=="
  "com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 sha512-FopIhNE/Ng+v2X65wVc9clPCBCvhvA53Hxo2U0Kf5fGdVsC7iCA+mZ0KLWggcQAj7TIZ6pNidR4AC10g74Xo6w=="
)
stamp_text=$(printf '%s\n' "${pkgs[@]}")
log() { printf 'gpu-setup: %s\n' "$*" >&2; }

if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$stamp_text" ]; then
  log "already complete: $dest"
  exit 0
fi
command -v npm >/dev/null || { log "npm is missing (make setup installs it)"; exit 1; }
command -v openssl >/dev/null || { log "openssl is missing (apt-get install openssl)"; exit 1; }

mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "$(dirname "$dest")/.ort-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib"
for p in "${pkgs[@]}"; do
  spec=${p%% *} want=${p#* }
  log "npm pack $spec"
  tgz=$(cd "$tmp" && npm pack --silent "$spec" | tail -n1)
  got="sha512-$(openssl dgst -sha512 -binary "$tmp/$tgz" | base64 -w0)"
  if [ "$got" != "$want" ]; then
    log "$spec: integrity $got, pinned $want: refusing to unpack it"
    exit 1
  fi
  case $spec in
    com.github.asus4.onnxruntime@*)
      tar --no-same-owner -xzf "$tmp/$tgz" -C "$tmp" package/Plugins/Linux/x64/libonnxruntime.so package/Plugins/Linux/x64/libonnxruntime_providers_shared.so
      mv "$tmp/package/Plugins/Linux/x64/libonnxruntime.so" "$tmp/lib/libonnxruntime.so.1"
      mv "$tmp/package/Plugins/Linux/x64/libonnxruntime_providers_shared.so" "$tmp/lib/" ;;
    *)
      tar --no-same-owner -xzf "$tmp/$tgz" -C "$tmp" package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so
      mv "$tmp/package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so" "$tmp/lib/" ;;
  esac
  rm -rf "$tmp/$tgz" "$tmp/package"
done
chmod 0755 "$tmp"/lib/*.so*
printf '%s\n' "${pkgs[@]}" > "$tmp/lib/.complete"
# Swap in: the old directory (if any) is moved aside first, then removed.
if [ -e "$dest" ]; then mv "$dest" "$tmp/old"; fi
mv "$tmp/lib" "$dest"
log "done: ONNXRUNTIME_LIB=$dest/libonnxruntime.so.1"
ls -l "$dest" >&2
