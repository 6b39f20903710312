#!/usr/bin/env python3
"""PyTorch baseline of bench/gpu/run.sh: torch.topk(q @ D.T) over n generated
768-d fp16 unit vectors on one GPU.

--serve (what run.sh uses, through interleave.py): the same line protocol as
bench/gpu/gpubench, one JSON command per line on stdin, one JSON answer per
line on stdout, so that the two processes keep their corpora resident and are
timed alternately:

  {"op": "copy", "mib": 4096, "reps": 10}   device-to-device copy, GB/s (read + written)
  {"op": "load", "n": N, "dim": 768, "seed": 1}
  {"op": "calibrate", "batch": B, "k": 10, "min_ms": 50}   two warm-ups, calls per repetition
  {"op": "time", "batch": B, "k": 10, "calls": C}          mean ms per call
  {"op": "quit"}

A call is `s, i = torch.topk(q @ D.T, k, dim=1)` with the results copied to the
host (`s.float().cpu(), i.cpu()`), as GPUFlat.Search returns its results on the
host. The corpus is generated on the GPU in chunks of 1M rows (no fp32 copy of
the whole corpus); its values differ from gpubench's, the work does not.

--numpy runs the same protocol with numpy on the CPU (float32 matmul and
argpartition): the stand-in bench/gpu/run.sh --dry-run uses on machines
without a GPU or PyTorch. Its numbers mean nothing.

Without --serve it prints one JSON line per (n, batch) as before (impl "torch").
"""
import argparse
import json
import sys
import time


class TorchBackend:
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        self.dev = torch.device("cuda")
        self.D = None
        self.q = {}

    def info(self):
        t = self.torch
        return {"torch": t.__version__, "cuda": t.version.cuda, "device": t.cuda.get_device_name()}

    def load(self, n, dim, seed):
        t = self.torch
        self.D = None
        t.cuda.empty_cache()
        g = t.Generator(device=self.dev).manual_seed(seed)
        D = t.empty((n, dim), dtype=t.float16, device=self.dev)
        for lo in range(0, n, 1 << 20):
            hi = min(lo + (1 << 20), n)
            x = t.randn((hi - lo, dim), generator=g, device=self.dev)
            D[lo:hi] = (x / x.norm(dim=1, keepdim=True)).half()
        t.cuda.synchronize()
        self.D, self.q, self.dim = D, {}, dim

    def query(self, b):
        t = self.torch
        if b not in self.q:
            g = t.Generator(device=self.dev).manual_seed(1000 + b)
            x = t.randn((b, self.dim), generator=g, device=self.dev)
            self.q[b] = (x / x.norm(dim=1, keepdim=True)).half()
        return self.q[b]

    def run(self, b, k):
        s, i = self.torch.topk(self.query(b) @ self.D.T, k, dim=1)
        return s.float().cpu(), i.cpu()

    def copy(self, mib, reps):
        t = self.torch
        n = mib << 20
        src = t.ones(n // 2, dtype=t.float16, device=self.dev)
        dst = t.empty_like(src)
        e0, e1 = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        out = []
        for i in range(reps + 2):
            e0.record()
            dst.copy_(src)
            e1.record()
            e1.synchronize()
            if i >= 2:
                out.append(2 * n / (e0.elapsed_time(e1) * 1e-3) / 1e9)
        del src, dst
        t.cuda.empty_cache()
        return out


class NumpyBackend:
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np
        self.D = None
        self.q = {}

    def info(self):
        return {"numpy": self.np.__version__, "device": "cpu (dry run stand-in)"}

    def load(self, n, dim, seed):
        np = self.np
        x = np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        self.D, self.q, self.dim = x.astype(np.float16).astype(np.float32), {}, dim

    def query(self, b):
        np = self.np
        if b not in self.q:
            x = np.random.default_rng(1000 + b).standard_normal((b, self.dim), dtype=np.float32)
            self.q[b] = x / np.linalg.norm(x, axis=1, keepdims=True)
        return self.q[b]

    def run(self, b, k):
        np = self.np
        s = self.query(b) @ self.D.T
        k = min(k, s.shape[1])
        i = np.argpartition(-s, k - 1, axis=1)[:, :k]
        return np.take_along_axis(s, i, axis=1), i

    def copy(self, mib, reps):
        return None


def serve(be):
    def reply(d):
        sys.stdout.write(json.dumps(d) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            c = json.loads(line)
        except ValueError as e:
            reply({"error": "bad command: %s" % e})
            continue
        op = c.get("op")
        try:
            if op == "quit":
                reply({"ok": True})
                return
            if op == "copy":
                g = be.copy(c.get("mib", 4096), c.get("reps", 10))
                if g is None:
                    reply({"op": op, "skipped": "no GPU (%s)" % be.name})
                else:
                    g2 = sorted(g)
                    reply({"op": op, "impl": be.name, "gbps": g2[len(g2) // 2], "gbps_all": g})
            elif op == "load":
                t0 = time.perf_counter()
                be.load(c["n"], c.get("dim", 768), c.get("seed", 1))
                reply({"op": op, "n": c["n"], "upload_s": time.perf_counter() - t0, **be.info()})
            elif op in ("calibrate", "time"):
                b, k = c.get("batch", 1), c.get("k", 10)

                def timed(calls):
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        be.run(b, k)
                    return (time.perf_counter() - t0) * 1e3 / calls

                if op == "calibrate":
                    timed(2)
                    ms = timed(1)
                    calls = max(1, min(1000, int(-(-c.get("min_ms", 50) // max(ms, 1e-3)))))
                    reply({"op": op, "batch": b, "k": k, "ms": ms, "calls": calls})
                else:
                    calls = c.get("calls", 1)
                    reply({"op": op, "batch": b, "k": k, "ms": timed(calls), "calls": calls})
            else:
                reply({"op": op, "error": "unknown op %r" % op})
        except Exception as e:  # report, keep serving: the driver decides
            reply({"op": op, "error": "%s: %s" % (type(e).__name__, e)})


def batch_mode(a):
    be = TorchBackend()
    for n in [int(s) for s in a.n.split(",")]:
        be.load(n, a.dim, 1)
        for b in [int(s) for s in a.batches.split(",")]:
            be.run(b, a.k)
            iters, t0 = 0, time.perf_counter()
            while True:
                be.run(b, a.k)
                iters += 1
                el = time.perf_counter() - t0
                if el >= a.seconds and iters >= 3:
                    break
            lat = el / iters
            floor = 2 * n * a.dim * b / (a.peak_tflops * 1e12) + n * a.dim * 2 / (a.peak_tbps * 1e12)
            print(json.dumps({"impl": "torch", "n": n, "dim": a.dim, "batch": b, "k": a.k, "iters": iters,
                              "latency_ms": lat * 1e3, "qps": b / lat, "roofline_ms": floor * 1e3,
                              "roofline_fraction": floor / lat, **be.info()}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", action="store_true", help="line protocol on stdin/stdout (interleave.py)")
    ap.add_argument("--numpy", action="store_true", help="with --serve: numpy on the CPU instead of torch (dry runs)")
    ap.add_argument("--n", default="1000000", help="comma-separated corpus sizes")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batches", default="1,64,512")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--peak-tflops", type=float, default=790.0)
    ap.add_argument("--peak-tbps", type=float, default=4.3)
    a = ap.parse_args()
    if a.serve:
        serve(NumpyBackend() if a.numpy else TorchBackend())
    else:
        batch_mode(a)


if __name__ == "__main__":
    main()
