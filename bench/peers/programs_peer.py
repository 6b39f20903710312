#!/usr/bin/python3
"""CPython peer of the `programs` suite of `rlsearch-bench run` (run by package bench/peers).

The same rollout programs (Starlark is Python syntax) executed by CPython 3 with exec() against a
stub SDK with the semantics of sdk's primitives over precomputed result lists: a retrieval call of
width k returns rows 0..k-1 shifted by a hash of the query (CRC-32 % 97, stride 7, 1000 stub docs),
dedup keeps the first of equal ids and refuses one id with two contents, fuse is RRF with k = 60
(ties by row then id), rerank scores len(contents) % 7, print renders "Doc {i}(Title: {title_line}) {text}".
The stub is internal/stubsdk/stub_sdk.py (also BenchmarkStarlarkOverhead's peer), imported; bench/peers checks that its
observations equal the Go runtime's over the Go stub (TestProgramsParity), so both do equal work and
programs/s compare interpreter and runtime overhead only. No sandbox (exec in-process): the Python
side pays nothing for isolation, ours pays Starlark's step budget and heap accounting.

  programs_peer.py JOB.json         JOB: {"programs": [src...], "time_s": 2, "system": "...",
                                          "params": {...}, "out": "rows.json"}
                                    -> a JSON array of one bench.Row (one Rep) in "out"
  programs_peer.py --observations PROGRAMS.json   -> one JSON string (the observation) per line
"""
import json
import os
import sys
import time

from stub_sdk import make_sdk  # internal/stubsdk/stub_sdk.py, written beside this script


def run_one(src, question):
    out = []
    g = make_sdk(out)
    g["question"] = question
    exec(compile(src, "program", "exec"), g)
    return "".join(out)


def main():
    if sys.argv[1] == "--observations":
        for p in json.load(open(sys.argv[2])):
            print(json.dumps(run_one(p, "stub question")))
        return
    job = json.load(open(sys.argv[1]))
    progs, min_s = job["programs"], float(job["time_s"])
    for p in progs:  # warm: compile errors surface before timing
        run_one(p, "stub question")
    lats, n = [], 0
    t0 = time.perf_counter()
    while True:
        src = progs[n % len(progs)]
        t = time.perf_counter()
        run_one(src, "stub question")
        lats.append((time.perf_counter() - t) * 1e3)
        n += 1
        el = time.perf_counter() - t0
        if el >= min_s and n >= len(progs):
            break
    s = sorted(lats)
    pick = lambda p: s[max(0, -(-len(s) * p // 100) - 1)]  # noqa: E731  nearest rank
    step = max(1, len(s) // 512)
    rep = {"throughput": n / el, "p50_ms": pick(50), "p95_ms": pick(95), "p99_ms": pick(99), "ops": n,
           "elapsed_ns": int(el * 1e9), "latencies_ms": s[::step][:512]}
    row = {"suite": "programs", "system": job["system"], "config": "", "params": job["params"],
           "unit": "programs/s", "reps": [rep], "note": "CPython exec() over a stub SDK (no sandbox)"}
    tmp = job["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump([row], f)
    os.replace(tmp, job["out"])


if __name__ == "__main__":
    main()
