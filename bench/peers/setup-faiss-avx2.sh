#!/bin/bash
# Builds the fair faiss peer: Debian's own faiss 1.7.3 source package, compiled with its AVX2
# kernels (FAISS_OPT_LEVEL=avx2: -mavx2 -mfma -mf16c -mpopcnt, the build upstream's pip/conda
# packages ship), Release (-O3), Python bindings only (targets faiss_avx2 + swigfaiss_avx2; no
# C API, no tests, no GPU). Debian's python3-faiss is built for the generic x86-64 baseline, so
# its HNSW distances run in scalar code.
#
# Result: $OUT/python/faiss, a Python package (Debian's pure-Python wrappers + _swigfaiss_avx2.so)
# used by putting $OUT/python first on PYTHONPATH. `faiss.get_compile_options()` says "AVX2".
# Idempotent: does nothing when the package is already there. Root needed for apt.
# Cost: ~150 C++ files + the SWIG wrapper: about 7 minutes measured on 2 shared cores (nice -n 15, load average 5-9).
#
#   bash bench/peers/setup-faiss-avx2.sh        (make bench-setup runs it)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${FAISS_AVX2_DIR:-$ROOT/.cache/faiss-avx2}"
JOBS="${JOBS:-$(nproc)}"
PKG="$OUT/python/faiss"

if [ -f "$PKG/.built" ]; then
  echo "faiss-avx2: already built in $PKG"
  exit 0
fi
if ! grep -q avx2 /proc/cpuinfo; then
  echo "faiss-avx2: this CPU has no AVX2; the Debian build is the only faiss peer here" >&2
  exit 1
fi

# deb-src for the exact Debian sources of the installed python3-faiss.
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  cat > /etc/apt/sources.list.d/debian-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -qq
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  dpkg-dev cmake swig g++ make libblas-dev liblapack-dev libopenblas-dev python3-dev python3-numpy python3-faiss

mkdir -p "$OUT/src"
cd "$OUT/src"
if [ ! -d faiss-1.7.3 ]; then
  apt-get source faiss=1.7.3-2   # applies Debian's patches
fi
SRC="$OUT/src/faiss-1.7.3"
BUILD="$OUT/build"
cmake -S "$SRC" -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DFAISS_OPT_LEVEL=avx2 \
  -DFAISS_ENABLE_GPU=OFF \
  -DFAISS_ENABLE_PYTHON=ON \
  -DFAISS_ENABLE_C_API=OFF \
  -DBUILD_TESTING=OFF \
  -DPython_EXECUTABLE=/usr/bin/python3 \
  -DBLA_VENDOR=OpenBLAS
echo "faiss-avx2: compiling (nice -n 15, $JOBS jobs)"
nice -n 15 cmake --build "$BUILD" --target swigfaiss_avx2 -j "$JOBS"

# Package: Debian's pure-Python files (same version) + the AVX2 extension only, so the loader
# cannot fall back to a generic build silently.
rm -rf "$PKG.tmp"
mkdir -p "$PKG.tmp"
cp "$BUILD"/faiss/python/*.py "$PKG.tmp"/
cp -r "$SRC/contrib" "$PKG.tmp/contrib"
cp "$BUILD"/faiss/python/swigfaiss_avx2.py "$PKG.tmp/"
cp "$BUILD"/faiss/python/_swigfaiss_avx2*.so "$PKG.tmp/"
rm -f "$PKG.tmp/swigfaiss.py" "$PKG.tmp/setup.py"
mv "$PKG.tmp" "$PKG.new" && rm -rf "$PKG" && mv "$PKG.new" "$PKG"
opts=$(cd / && PYTHONPATH="$OUT/python" /usr/bin/python3 -c 'import faiss; print(faiss.get_compile_options())')
case "$opts" in
  *AVX2*) echo "faiss-avx2: ok ($opts) in $PKG"; touch "$PKG/.built" ;;
  *) echo "faiss-avx2: built module does not report AVX2 (got: $opts)" >&2; exit 1 ;;
esac
