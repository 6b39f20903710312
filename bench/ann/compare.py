#!/usr/bin/python3
"""Side-by-side CPU vector search: rlsearch (ann.Flat, ann.HNSW via annbench) vs faiss.

Same vectors (written once as .fvecs), same ground truth (exact inner product computed here in
float64 numpy), same thread count for both (GOMAXPROCS for Go; faiss.omp_set_num_threads and
OPENBLAS_NUM_THREADS for faiss). Needs Debian python3-faiss python3-numpy libopenblas0-pthread
(`make bench-ann` installs them) with OpenBLAS as the active libblas.so.3.

  /usr/bin/python3 bench/ann/compare.py --threads 2 [--quick] [--only flat,clustered,...]

Prints one table per data set with queries/s ratios (rlsearch / faiss).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=os.cpu_count())
ap.add_argument("--quick", action="store_true", help="smaller sets, shorter timings")
ap.add_argument("--only", default="", help="comma-separated subset: flat,clustered,random,bge,wiki,sift,fmnist")
ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../../shared/data/vectors"))
ap.add_argument("--wiki", default="", help="directory with base.fvecs/query.fvecs from bench/ann/wikivecs (wiki_multihop passages and questions embedded by the generated E5-shaped model)")
ap.add_argument("--M", type=int, default=16)
ap.add_argument("--efc", type=int, default=100)
ap.add_argument("--efs", default="16,32,64,128,256")
ap.add_argument("--time", type=float, default=3.0, help="seconds per measurement")
ap.add_argument("--n-flat", type=int, default=100_000, help="vectors in the exact flat set (384-d)")
ap.add_argument("--n-hnsw", type=int, default=50_000, help="vectors in the clustered and random HNSW sets (128-d)")
ap.add_argument("--omp-passive", action="store_true",
                help="OMP_WAIT_POLICY=PASSIVE for faiss (idle OpenMP threads sleep instead of spinning: fairer on a loaded machine)")
args = ap.parse_args()
if args.omp_passive:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import numpy as np  # noqa: E402  (after the thread variables)
import faiss  # noqa: E402

faiss.omp_set_num_threads(args.threads)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
WORK = tempfile.mkdtemp(prefix="annbench-")
BIN = os.path.join(WORK, "annbench")
subprocess.run(["go", "build", "-o", BIN, "./bench/ann/annbench"], cwd=ROOT, check=True)


def write_fvecs(path, x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    n, d = x.shape
    out = np.empty((n, d + 1), dtype=np.float32)
    out[:, 0] = np.frombuffer(np.int32(d).tobytes(), dtype=np.float32)[0]
    out[:, 1:] = x
    out.tofile(path)


def write_ivecs(path, x):
    x = np.ascontiguousarray(x, dtype=np.int32)
    n, d = x.shape
    out = np.empty((n, d + 1), dtype=np.int32)
    out[:, 0] = d
    out[:, 1:] = x
    out.tofile(path)


def read_vecs(path, dtype):
    raw = np.fromfile(path, dtype=np.uint8)
    d = int(np.frombuffer(raw[:4].tobytes(), dtype=np.int32)[0])
    item = np.dtype(dtype).itemsize
    rows = raw.reshape(-1, 4 + d * item)[:, 4:]
    return np.frombuffer(rows.tobytes(), dtype=dtype).reshape(-1, d).astype(np.float32)


def unit(x):
    n = np.linalg.norm(x, axis=1, keepdims=True)
    n[n == 0] = 1
    return (x / n).astype(np.float32)


def truth(xb, xq, k=10):
    s = xq.astype(np.float64) @ xb.astype(np.float64).T
    # ties by ascending row, as both libraries' exact search
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


def go(*flags):
    env = dict(os.environ, GOMAXPROCS=str(args.threads))
    out = subprocess.run([BIN, *flags, "-time", f"{args.time}s"], env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def timed(fn, min_s):
    n, t0 = 0, time.perf_counter()
    while True:
        n += fn()
        el = time.perf_counter() - t0
        if el >= min_s:
            return n / el


def recall(I, gt, k=10):
    return float(np.mean([len(set(I[i, :k]) & set(gt[i, :k])) / k for i in range(len(gt))]))


def bench_flat(name, xb, xq):
    print(f"\n## exact flat, {name}: n={len(xb)} dim={xb.shape[1]} k=10, threads={args.threads}")
    index = faiss.IndexFlatIP(xb.shape[1])
    index.add(xb)
    fb, fq = os.path.join(WORK, "flat_b.fvecs"), os.path.join(WORK, "flat_q.fvecs")
    write_fvecs(fb, xb)
    write_fvecs(fq, xq)
    ours = {}
    for dt in ("fp32", "fp16", "int8"):
        for r in go("-mode", "flat", "-base", fb, "-queries", fq, "-batch", "1,64", "-dtype", dt):
            ours[(dt, r["batch"])] = r
    print("| batch | faiss IndexFlatIP q/s | rlsearch fp32 q/s | ratio | rlsearch fp16 q/s | rlsearch int8 q/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for b in (1, 64):
        pos = [0]

        def step():
            lo = pos[0] % len(xq)
            q = xq[lo:lo + b]
            index.search(q, 10)
            pos[0] += len(q)
            return len(q)

        f = timed(step, args.time)
        o = ours[("fp32", b)]["qps"]
        print(f"| {b} | {f:,.0f} | {o:,.0f} | {o / f:.2f}× | {ours[('fp16', b)]['qps']:,.0f} | {ours[('int8', b)]['qps']:,.0f} |")
    print(f"(rlsearch kernel: {ours[('fp32', 64)]['kernel']})")


def bench_hnsw(name, xb, xq, gt):
    d = xb.shape[1]
    print(f"\n## HNSW, {name}: n={len(xb)} dim={d} queries={len(xq)} M={args.M} efConstruction={args.efc} k=10, threads={args.threads}")
    fb, fq, fg = (os.path.join(WORK, f"{name}_{s}") for s in ("b.fvecs", "q.fvecs", "gt.ivecs"))
    write_fvecs(fb, xb)
    write_fvecs(fq, xq)
    write_ivecs(fg, gt)
    index = faiss.IndexHNSWFlat(d, args.M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = args.efc
    t0 = time.perf_counter()
    index.add(xb)
    fbuild = time.perf_counter() - t0
    frows = {}
    for ef in map(int, args.efs.split(",")):
        index.hnsw.efSearch = ef
        res = {}

        def step():
            res["I"] = index.search(xq, 10)[1]
            return len(xq)

        qps = timed(step, args.time)
        frows[ef] = (recall(res["I"], gt), qps)
    flags = ["-mode", "hnsw", "-base", fb, "-queries", fq, "-gt", fg, "-M", str(args.M), "-efc", str(args.efc), "-efs", args.efs]
    ours = go(*flags)
    ours8 = go(*flags, "-int8")
    b, b8 = ours[0], ours8[0]
    print(f"build: faiss {fbuild:.1f} s, rlsearch {b['build_s']:.1f} s (int8 {b8['build_s']:.1f} s); "
          f"rlsearch graph {b['graph_bytes_per_vec']:.0f} B/vector")
    print("| efSearch | faiss recall@10 | faiss q/s | rlsearch recall@10 | rlsearch q/s | q/s ratio | rlsearch int8 recall@10 | int8 q/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r, r8 in zip(ours[1:], ours8[1:]):
        fr, fq_ = frows[r["efs"]]
        print(f"| {r['efs']} | {fr:.3f} | {fq_:,.0f} | {r['recall']:.3f} | {r['qps']:,.0f} | {r['qps'] / fq_:.2f}× | {r8['recall']:.3f} | {r8['qps']:,.0f} |")


def main():
    only = set(filter(None, args.only.split(",")))
    want = lambda s: not only or s in only  # noqa: E731
    rng = np.random.default_rng(1)
    blas = next((l.split()[-1] for l in open("/proc/self/maps") if "libopenblas" in l or "libblas.so" in l), "?")
    print(f"load: {open('/proc/loadavg').read().split()[:3]}, faiss {faiss.__version__} ({faiss.get_compile_options().strip()}), "
          f"BLAS {blas}, threads {args.threads}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}")
    n_flat = 20_000 if args.quick else args.n_flat
    n_h = 10_000 if args.quick else args.n_hnsw
    if want("flat"):
        bench_flat("random unit vectors", unit(rng.standard_normal((n_flat, 384), dtype=np.float32)),
                   unit(rng.standard_normal((1024, 384), dtype=np.float32)))
    if want("clustered"):
        d, c = 128, 300
        centres = unit(rng.standard_normal((c, d), dtype=np.float32))
        x = unit(centres[rng.integers(0, c, n_h + 1000)] + 0.15 * rng.standard_normal((n_h + 1000, d), dtype=np.float32))
        bench_hnsw("clustered", x[:n_h], x[n_h:], truth(x[:n_h], x[n_h:]))
    if want("random"):
        x = unit(rng.standard_normal((n_h + 1000, 128), dtype=np.float32))
        bench_hnsw("random", x[:n_h], x[n_h:], truth(x[:n_h], x[n_h:]))
    if want("bge"):
        p = os.path.join(args.data, "beir_bge_base_queries")
        xb, xq = read_vecs(f"{p}/base.fvecs", np.float32), read_vecs(f"{p}/query.fvecs", np.float32)
        bench_hnsw("bge-base", xb, xq, truth(xb, xq))
    if want("wiki") and args.wiki:
        xb, xq = read_vecs(f"{args.wiki}/base.fvecs", np.float32), read_vecs(f"{args.wiki}/query.fvecs", np.float32)
        bench_hnsw("wiki_multihop-e5-shaped", xb, xq, truth(xb, xq))
    if want("sift"):
        p = os.path.join(args.data, "bigann10k")
        xb, xq = unit(read_vecs(f"{p}/base.bvecs", np.uint8)), unit(read_vecs(f"{p}/query.bvecs", np.uint8))
        bench_hnsw("sift10k-normalised", xb, xq, truth(xb, xq))
    if want("fmnist"):
        p = os.path.join(args.data, "fashion_mnist")
        xb, xq = unit(read_vecs(f"{p}/base.bvecs", np.uint8)), unit(read_vecs(f"{p}/query.bvecs", np.uint8))
        bench_hnsw("fashion-mnist-normalised", xb, xq, truth(xb, xq))
    print(f"\nload after: {open('/proc/loadavg').read().split()[:3]}")


main()
