#!/usr/bin/python3
"""faiss peer for the `flat` and `hnsw` suites of `rlsearch-bench run` (run by package bench/peers).

  /usr/bin/python3 faiss_peer.py JOB.json

JOB.json (written by the Go side):
  {"system": "faiss-1.7.3-avx2", "lib": "faiss"|"hnswlib", "threads": 2, "k": 10, "time_s": 2.0, "reps": 3,
   "batches": [1, 64], "M": 16, "efc": 100, "efs": [16, 64, 256], "out": "rows.json",
   "sets": [{"name": "bge", "mode": "flat"|"hnsw", "base": "b.fvecs", "queries": "q.fvecs",
             "normalize": false}]}

Writes a JSON array of bench.Row (bench/result.go) to "out"; the Go side sets each Row's Config
from its Params so that ours and the peer share one key. Which faiss is imported is decided by
PYTHONPATH (the AVX2 build in .cache/faiss-avx2/python, or Debian's python3-faiss), and threading by
the environment the Go side sets: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, OMP_WAIT_POLICY, and
LD_LIBRARY_PATH selecting Debian's OpenMP OpenBLAS (libopenblas0-openmp) so that OpenBLAS and faiss
share one OpenMP runtime. The row's note records the compile options, the BLAS actually mapped and
the wait policy.

Ground truth: exact inner product in float64 numpy (ties by ascending row, as both exact searches).

Caches next to "out": the truth per set and k, and each HNSW graph per (system, lib, M, efConstruction, set files),
written once with faiss.write_index / hnswlib save_index (temp file + rename) with its build seconds and build
thread count; later jobs (other thread counts, the rounds of `--interleave`) load it instead of building. Every
repetition records the process's CPU time over its timed loop (cpu_ns; time.process_time(), every thread).
"""
import json
import os
import sys
import time

import numpy as np

job = json.load(open(sys.argv[1]))
T = int(job["threads"])
LIB = job.get("lib", "faiss")
if LIB == "hnswlib":
    import hnswlib
else:
    import faiss
    faiss.omp_set_num_threads(T)


class HNSWLib:
    """hnswlib's Index (space "ip") behind the two faiss calls measure() and main() make:
    search(q, k) and hnsw.efSearch. knn_query runs the batch on num_threads = T threads (hnswlib's
    own ParallelFor over queries); batch 1 runs on the calling thread."""

    class _Params:
        def __init__(self, outer):
            self.outer = outer
            self.efConstruction = 0

        @property
        def efSearch(self):
            return self.outer.ef

        @efSearch.setter
        def efSearch(self, ef):
            self.outer.ef = ef
            self.outer.index.set_ef(ef)

    def __init__(self, d, m):
        self.d, self.m, self.ef = d, m, 10
        self.index = None
        self.hnsw = HNSWLib._Params(self)

    def add(self, xb):
        self.index = hnswlib.Index(space="ip", dim=self.d)
        self.index.init_index(max_elements=len(xb), ef_construction=self.hnsw.efConstruction, M=self.m, random_seed=1)
        self.index.add_items(xb, np.arange(len(xb)), num_threads=T)
        self.index.set_ef(self.ef)

    def search(self, q, k):
        labels, dist = self.index.knn_query(q, k=k, num_threads=T if len(q) > 1 else 1)
        return 1 - dist, labels.astype(np.int64)


def lib_note():
    if LIB == "hnswlib":
        try:
            import importlib.metadata as md
            v = md.version("hnswlib")
        except Exception:
            v = getattr(hnswlib, "__version__", "unknown")
        return f"hnswlib {v} (Debian python3-hnswlib), space ip, knn_query num_threads={T}"
    return (f"faiss {faiss.__version__} ({faiss.get_compile_options().strip()}), BLAS {blas_mapped()}, "
            f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}")


def read_vecs(path):
    raw = np.fromfile(path, dtype=np.uint8)
    if len(raw) < 4:
        sys.exit(f"faiss_peer: {path}: empty or truncated vector file")
    d = int(np.frombuffer(raw[:4].tobytes(), dtype=np.int32)[0])
    item = 1 if path.endswith(".bvecs") else 4
    if d <= 0 or len(raw) % (4 + d * item):
        sys.exit(f"faiss_peer: {path}: dimension {d} does not divide the file of {len(raw)} bytes")
    rows = raw.reshape(-1, 4 + d * item)[:, 4:]  # a strided view of the file's bytes
    if item == 1:
        return rows.astype(np.float32)
    # One contiguous float32 copy (a 1M × 768 file is 3 GB: no intermediate copies).
    out = np.empty((len(rows), d), dtype=np.float32)
    out.view(np.uint8).reshape(len(rows), 4 * d)[:] = rows
    return out


def unit(x):
    n = np.linalg.norm(x, axis=1, keepdims=True)
    n[n == 0] = 1
    return (x / n).astype(np.float32)


def truth(xb, xq, k, chunk=65536):
    """The exact top k rows of xb per query by float64 inner product, ties by ascending row, over chunks of
    xb (a 1M × 768 base would need 6 GB as float64 and 8 GB of scores in one product)."""
    q = xq.astype(np.float64)
    best_s = np.full((len(q), 0), -np.inf)
    best_i = np.zeros((len(q), 0), dtype=np.int64)
    for lo in range(0, len(xb), chunk):
        s = q @ xb[lo:lo + chunk].astype(np.float64).T
        top = np.argsort(-s, axis=1, kind="stable")[:, :k]
        cs = np.concatenate([best_s, np.take_along_axis(s, top, axis=1)], axis=1)
        ci = np.concatenate([best_i, top + lo], axis=1)
        # Order by descending score, then ascending row (earlier chunks hold lower rows).
        order = np.lexsort((ci, -cs), axis=1)[:, :k]
        best_s, best_i = np.take_along_axis(cs, order, axis=1), np.take_along_axis(ci, order, axis=1)
    return best_i


def cached_truth(st, xb, xq, k):
    """truth(), cached next to the job's output by the vector files' paths, sizes and times (the float64
    product is seconds per set on one core, and every build and thread count would redo it)."""
    path = cache_path(st, ["truth", k], "truth.npy")
    try:
        gt = np.load(path)
        if gt.shape == (len(xq), k):
            return gt
    except (OSError, ValueError):
        pass
    gt = truth(xb, xq, k)
    np.save(path + ".tmp.npy", gt)
    os.replace(path + ".tmp.npy", path)
    return gt


def cache_path(st, kind, ext):
    """A file next to the job's output named by a hash of the set's vector files (paths, sizes, times), its
    normalisation and kind (the system, M, efConstruction, ...)."""
    key = [st["name"], bool(st.get("normalize")), kind]
    for f in (st["base"], st["queries"]):
        s = os.stat(f)
        key += [os.path.abspath(f), s.st_size, s.st_mtime_ns]
    return os.path.join(os.path.dirname(os.path.abspath(job["out"])), "%016x.%s" % (hash_key(json.dumps(key)), ext))


def built_hnsw(st, d, n, build):
    """The HNSW graph of the set for this system, M and efConstruction: loaded from the cache the first call
    wrote (faiss write_index / hnswlib save_index), else built from the base vectors build() returns and
    saved (temp file + rename). Returns (index, build seconds, build threads, cached)."""
    M, efc = int(job["M"]), int(job["efc"])
    path = cache_path(st, [job["system"], LIB, M, efc], "hnsw")
    meta = path + ".json"
    try:
        info = json.load(open(meta))
        if LIB == "hnswlib":
            index = HNSWLib(d, M)
            index.index = hnswlib.Index(space="ip", dim=d)
            index.index.load_index(path, max_elements=n)
        else:
            index = faiss.read_index(path)  # the Python wrapper returns the subclass (IndexHNSWFlat)
        if index_len(index) == n:
            return index, float(info["build_s"]), int(info["build_threads"]), True
    except (OSError, ValueError, KeyError, RuntimeError):
        pass
    xb = build()
    if LIB == "hnswlib":
        index = HNSWLib(d, M)
    else:
        index = faiss.IndexHNSWFlat(d, M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = efc
    t0 = time.perf_counter()
    index.add(xb)
    build_s = time.perf_counter() - t0
    tmp = path + ".tmp"
    if LIB == "hnswlib":
        index.index.save_index(tmp)
    else:
        faiss.write_index(index, tmp)
    os.replace(tmp, path)
    with open(meta + ".tmp", "w") as f:
        json.dump({"build_s": build_s, "build_threads": T}, f)
    os.replace(meta + ".tmp", meta)
    return index, build_s, T, False


def index_len(index):
    return index.index.get_current_count() if isinstance(index, HNSWLib) else index.ntotal


def hash_key(s):
    h = 0xcbf29ce484222325  # FNV-1a 64
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def recall(I, gt, k):
    return float(np.mean([len(set(I[i, :k]) & set(gt[i, :k])) / k for i in range(len(gt))]))


def blas_mapped():
    try:
        for line in open("/proc/self/maps"):
            if "libopenblas" in line or "libblas.so" in line:
                return line.split()[-1]
    except OSError:
        pass
    return "?"


def measure(index, xq, b, k, min_s):
    """Searches batches of b queries (cycling over xq) for at least min_s seconds."""
    lats, n, pos = [], 0, 0
    index.search(xq[:b], k)  # warm
    c0 = time.process_time()  # this process's CPU, every thread (faiss's OpenMP ones too)
    t0 = time.perf_counter()
    while True:
        lo = pos % len(xq)
        q = xq[lo:lo + b]
        if len(q) < b:
            q = np.concatenate([q, xq[: b - len(q)]])
        t = time.perf_counter()
        index.search(q, k)
        lats.append((time.perf_counter() - t) * 1e3)
        n += len(q)
        pos += len(q)
        el = time.perf_counter() - t0
        if el >= min_s:
            break
    cpu = time.process_time() - c0
    s = np.sort(np.array(lats))
    pick = lambda p: float(s[max(0, int(np.ceil(p / 100 * len(s))) - 1)])  # noqa: E731  nearest rank
    samp = s[np.linspace(0, len(s) - 1, min(len(s), 512)).astype(int)].tolist()
    return {"throughput": n / el, "p50_ms": pick(50), "p95_ms": pick(95), "p99_ms": pick(99),
            "ops": n, "elapsed_ns": int(el * 1e9), "cpu_ns": int(cpu * 1e9), "latencies_ms": samp}


def main():
    k, reps, min_s = int(job["k"]), int(job["reps"]), float(job["time_s"])
    note = lib_note()
    rows = []
    for st in job["sets"]:
        xb, xq = read_vecs(st["base"]), read_vecs(st["queries"])
        if st.get("normalize"):
            xb, xq = unit(xb), unit(xq)
        n, d = xb.shape
        if xq.shape[1] != d:
            sys.exit(f"faiss_peer: {st['name']}: queries are {xq.shape[1]}-d, base {d}-d")
        base = {"data": st["name"], "n": n, "dim": d, "k": k, "threads": T}
        if st["mode"] == "flat":
            if LIB != "faiss":
                sys.exit(f"faiss_peer: lib {LIB} has no flat mode")
            index = faiss.IndexFlatIP(d)
            index.add(xb)
            for b in job["batches"]:
                reps_out = [measure(index, xq, b, k, min_s) for _ in range(reps)]
                rows.append({"suite": "flat", "system": job["system"], "params": dict(base, batch=b, index="flat"),
                             "unit": "queries/s", "reps": reps_out, "note": note})
                print(f"faiss_peer: flat {st['name']} batch={b} threads={T}: {reps_out[0]['throughput']:,.0f} q/s",
                      file=sys.stderr, flush=True)
        else:
            gt = cached_truth(st, xb, xq, k)
            index, build_s, build_t, cached = built_hnsw(st, d, n, lambda: xb)
            print(f"faiss_peer: hnsw {st['name']}: graph {'loaded from the cache' if cached else 'built'} "
                  f"({build_s:.1f} s on {build_t} threads)", file=sys.stderr, flush=True)
            for ef in job["efs"]:
                index.hnsw.efSearch = int(ef)
                rec = recall(index.search(xq, k)[1], gt, k)
                for b in job["batches"]:
                    reps_out = []
                    for _ in range(reps):
                        r = measure(index, xq, b, k, min_s)
                        r["extra"] = {f"recall@{k}": rec, "build_s": build_s, "build_threads": build_t}
                        reps_out.append(r)
                    rows.append({"suite": "hnsw", "system": job["system"],
                                 "params": dict(base, batch=b, M=int(job["M"]), efc=int(job["efc"]), ef=int(ef), index="hnsw"),
                                 "unit": "queries/s", "reps": reps_out, "note": note})
                    print(f"faiss_peer: hnsw {st['name']} ef={ef} batch={b} threads={T}: "
                          f"{reps_out[0]['throughput']:,.0f} q/s recall {rec:.3f}", file=sys.stderr, flush=True)
    tmp = job["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rows, f)
    os.replace(tmp, job["out"])


main()
