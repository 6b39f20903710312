#!/usr/bin/env python3
"""Times rlsearch (bench/gpu/gpubench) and PyTorch (torch_baseline.py --serve)
interleaved: both processes hold the same-sized corpus on the GPU at once, and
every repetition round times each implementation once, in an order that rotates
from round to round, so that clocks, temperature and neighbours affect both
alike. A repetition is `calls` searches back to back (calibrated so that one
lasts ≥ --min-ms); the figure reported is the median over --reps repetitions,
after two warm-up calls per implementation.

Implementations: "rlsearch" with each path in --paths (the first, auto, is the
one compared with torch in the summary; the others are the variants of
ann.GPUConfig.Path, and "int8": a second index of the same size over int8 rows
under ann.GPUConfig.Int8, one byte per value, loaded when --paths names it)
and "torch" (fp16). Roofline and shard read rate count 1 byte per value for
the int8 path, 2 for the others.

Writes one JSON line per measurement to --out (flushed at once, so that a run
cut short by its time limit keeps what it measured):
  {"kind": "copy", "impl", "gbps", ...}
  {"kind": "load", "impl", "n", "upload_s", ...}
  {"kind": "time", "impl", "path", "n", "batch", "k", "reps", "calls", "latency_ms", "ms_all",
   "qps", "roofline_ms", "roofline_fraction", "shard_gbps"}
  {"kind": "canary", "impl": "rlsearch", "n", "summary", "report", "int8_summary", "int8_report"}
      (ann.SearchCanary over the resident index after each load; a mismatch is an "error" line)
  {"kind": "http", "impl": "rlsearch", "n", "closed": {...}, "open": {...}}
  {"kind": "error", "impl", "what", "error"}
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import threading
import time


class Proc:
    """A child speaking the line protocol."""

    def __init__(self, name, cmd):
        self.name = name
        self.p = subprocess.Popen(shlex.split(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=sys.stderr, text=True, bufsize=1)

    def send(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("%s exited (rc %s)" % (self.name, self.p.poll()))
        return json.loads(line)

    def call(self, **cmd):
        self.send(**cmd)
        r = self.recv()
        if "error" in r:
            raise RuntimeError("%s %s: %s" % (self.name, cmd.get("op"), r["error"]))
        return r

    def close(self):
        try:
            self.call(op="quit")
        except Exception:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()


def both(fns):
    """Runs the callables in threads (e.g. the two loads), returns results or exceptions."""
    out = [None] * len(fns)

    def run(i):
        try:
            out[i] = fns[i]()
        except Exception as e:
            out[i] = e

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True, help="command of the gpubench process")
    ap.add_argument("--torch", required=True, help="command of the torch_baseline.py --serve process")
    ap.add_argument("--sizes", default="1000000,5000000,21000000")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--batches", default="1,64,512")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--paths", default="auto,tiled,segments", help="rlsearch paths; the first is compared with torch")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=50)
    ap.add_argument("--copy-mib", type=int, default=4096)
    ap.add_argument("--http-n", type=int, default=-1, help="size at which to run the /retrieve benchmark (-1: the largest; 0: none)")
    ap.add_argument("--http-seconds", type=float, default=8)
    ap.add_argument("--http-concurrency", type=int, default=32)
    ap.add_argument("--peak-tflops", type=float, default=790.0)
    ap.add_argument("--peak-tbps", type=float, default=4.3)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    batches = [int(s) for s in a.batches.split(",")]
    paths = a.paths.split(",")
    http_n = max(sizes) if a.http_n < 0 else a.http_n
    out = open(a.out, "a")
    t_start = time.time()

    def emit(**row):
        row["t"] = round(time.time() - t_start, 2)
        out.write(json.dumps(row) + "\n")
        out.flush()

    def log(msg):
        print("[%6.1fs] %s" % (time.time() - t_start, msg), file=sys.stderr, flush=True)

    ours, torch = Proc("rlsearch", a.ours), Proc("torch", a.torch)
    try:
        for p in (ours, torch):
            try:
                r = p.call(op="copy", mib=a.copy_mib, reps=10)
                emit(kind="copy", **{**r, "impl": p.name})
                log("%s copy: %s" % (p.name, r.get("gbps", r.get("skipped"))))
            except Exception as e:
                emit(kind="error", impl=p.name, what="copy", error=str(e))
        for n in sizes:
            loads = both([lambda p=p, x=x: p.call(op="load", n=n, dim=a.dim, seed=1, **x)
                          for p, x in ((ours, {"int8": "int8" in paths}), (torch, {}))])
            ok = {}
            for p, r in zip((ours, torch), loads):
                if isinstance(r, Exception):
                    emit(kind="error", impl=p.name, what="load n=%d" % n, error=str(r))
                    log("%s load n=%d failed: %s" % (p.name, n, r))
                else:
                    ok[p.name] = True
                    emit(kind="load", **{**r, "impl": p.name})
                    log("%s loaded n=%d in %.1f s" % (p.name, n, r.get("upload_s", 0)))
                    if r.get("int8_error"):  # the fp16 index is loaded; only the int8 path is missing
                        emit(kind="error", impl=p.name, path="int8", what="load int8 n=%d" % n, error=r["int8_error"])
                        log("%s int8 load n=%d failed: %s" % (p.name, n, r["int8_error"]))
            if "rlsearch" in ok:  # the search canary as ann.Open runs it, on the resident index
                try:
                    r = ours.call(op="canary")
                    emit(kind="canary", impl="rlsearch", n=n, summary=r.get("summary"), report=r.get("report"),
                         int8_summary=r.get("int8_summary"), int8_report=r.get("int8_report"))
                    log("rlsearch canary n=%d: %s" % (n, r.get("summary")))
                except Exception as e:
                    emit(kind="error", impl="rlsearch", what="canary n=%d" % n, error=str(e))
                    log("rlsearch canary n=%d FAILED: %s" % (n, e))
            n_paths = [x for x in paths if x != "int8" or (not isinstance(loads[0], Exception) and not loads[0].get("int8_error"))]
            for b in batches:
                impls = []  # (proc, name, path)
                if "rlsearch" in ok:
                    impls += [(ours, "rlsearch", path) for path in n_paths]
                if "torch" in ok:
                    impls.append((torch, "torch", None))
                calls, ms = {}, {}
                for proc, name, path in impls:
                    key = (name, path)
                    try:
                        extra = {"path": path} if path else {}
                        r = proc.call(op="calibrate", batch=b, k=a.k, min_ms=a.min_ms, **extra)
                        calls[key], ms[key] = r["calls"], []
                    except Exception as e:
                        emit(kind="error", impl=name, path=path, what="calibrate n=%d batch=%d" % (n, b), error=str(e))
                live = [i for i in impls if (i[1], i[2]) in calls]
                for rep in range(a.reps):
                    order = live[rep % max(len(live), 1):] + live[:rep % max(len(live), 1)]
                    for proc, name, path in order:
                        key = (name, path)
                        if key not in calls:
                            continue
                        try:
                            extra = {"path": path} if path else {}
                            ms[key].append(proc.call(op="time", batch=b, k=a.k, calls=calls[key], **extra)["ms"])
                        except Exception as e:
                            emit(kind="error", impl=name, path=path, what="time n=%d batch=%d" % (n, b), error=str(e))
                            del calls[key]
                for (name, path), v in ms.items():
                    if not v:
                        continue
                    es = 1 if path == "int8" else 2  # bytes per stored value
                    floor = 2 * n * a.dim * b / (a.peak_tflops * 1e12) + n * a.dim * es / (a.peak_tbps * 1e12)
                    lat = statistics.median(v) * 1e-3
                    emit(kind="time", impl=name, path=path or "", n=n, dim=a.dim, batch=b, k=a.k, reps=len(v),
                         calls=calls.get((name, path), 0), latency_ms=lat * 1e3, ms_all=v, qps=b / lat,
                         roofline_ms=floor * 1e3, roofline_fraction=floor / lat, shard_gbps=n * a.dim * es / lat / 1e9)
                    log("n=%d batch=%d %s%s: %.3f ms" % (n, b, name, " " + path if path else "", lat * 1e3))
            if n == http_n and "rlsearch" in ok:
                try:
                    r = ours.call(op="http", concurrency=a.http_concurrency, seconds=a.http_seconds, topk=3)
                    emit(kind="http", **{**r, "impl": "rlsearch"})
                    log("http n=%d: %s" % (n, json.dumps(r)))
                except Exception as e:
                    emit(kind="error", impl="rlsearch", what="http n=%d" % n, error=str(e))
    finally:
        ours.close()
        torch.close()


if __name__ == "__main__":
    main()
