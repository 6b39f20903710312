#!/usr/bin/env python3
"""Markdown tables from the JSON lines of interleave.py (and, for older runs,
of BenchmarkGPUThroughput and torch_baseline.py: rows without "kind" are
timings, without "path" the default path).

Usage: summary.py [--table-only] FILE.jsonl...

Tables: the comparison with torch in the columns of the 2026-11-30 run (n,
batch, rlsearch q/s, ms/batch, roofline, torch q/s, ms/batch, roofline,
rlsearch/torch as 0.00×), the issue's targets per row, every rlsearch path
(shard read rate against the copy bandwidth the same run measured), the copy
bandwidth, uploads, the /retrieve run and any errors. --table-only prints the
first table alone (tests compare it with the committed 2026-11-30 table).
"""
import json
import sys


def load(paths):
    rows = []
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if line.startswith("{"):
                        r = json.loads(line)
                        r.setdefault("kind", "time")
                        rows.append(r)
        except FileNotFoundError:
            print("(missing %s)" % path)
    return rows


def target(n, b):
    """The issue's bar for ours/torch (issue 21, "What it must show")."""
    if b == 1:
        return 0.95
    if n < 5_000_000:
        return 1.0
    return 2.0


def main():
    args = sys.argv[1:]
    table_only = "--table-only" in args
    rows = load([a for a in args if a != "--table-only"])
    times = [r for r in rows if r["kind"] == "time"]
    main_path = {}
    for r in times:  # the first path seen per (n, batch) is the compared one (interleave.py: --paths' first)
        if r["impl"] == "rlsearch":
            main_path.setdefault((r["n"], r["batch"]), r.get("path", ""))
    cell = {}
    for r in times:
        key = (r["n"], r["batch"])
        if r["impl"] == "torch" or r.get("path", "") == main_path.get(key):
            cell.setdefault(key, {})[r["impl"]] = r

    def f(x, k, fmt):
        return fmt % x[k] if x else "—"

    print("| n | batch | rlsearch q/s | ms/batch | roofline | torch q/s | ms/batch | roofline | rlsearch/torch |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(cell):
        n, b = key
        r, t = cell[key].get("rlsearch"), cell[key].get("torch")
        ratio = "%.2f×" % (r["qps"] / t["qps"]) if r and t else "—"
        print(f"| {n:,} | {b} | {f(r, 'qps', '%.0f')} | {f(r, 'latency_ms', '%.2f')} | {f(r, 'roofline_fraction', '%.2f')} "
              f"| {f(t, 'qps', '%.0f')} | {f(t, 'latency_ms', '%.2f')} | {f(t, 'roofline_fraction', '%.2f')} | {ratio} |")
    if table_only:
        return

    copies = [r for r in rows if r["kind"] == "copy" and "gbps" in r]
    copy_bw = {r["impl"]: r["gbps"] for r in copies}
    bw = copy_bw.get("rlsearch") or copy_bw.get("torch")

    print("\nIssue 21 targets (rlsearch/torch at every size and batch; 21M batch 512 ≤ 40 ms; batch 1 shard read ≥ 90% of the copy bandwidth):\n")
    print("| n | batch | rlsearch/torch | target | met | shard read / copy bandwidth |")
    print("|---|---|---|---|---|---|")
    for key in sorted(cell):
        n, b = key
        r, t = cell[key].get("rlsearch"), cell[key].get("torch")
        if not (r and t):
            continue
        ratio = r["qps"] / t["qps"]
        met = ratio >= target(n, b)
        extra = ""
        if n >= 21_000_000 and b == 512:
            met = met and r["latency_ms"] <= 40
            extra = " (and ≤ 40 ms: %.1f)" % r["latency_ms"]
        share = "—"
        if bw and "shard_gbps" in r:
            share = "%.2f" % (r["shard_gbps"] / bw)
        print(f"| {n:,} | {b} | {ratio:.2f}× | ≥ {target(n, b):.2f}×{extra} | {'yes' if met else 'no'} | {share} |")

    paths = [r for r in times if r["impl"] == "rlsearch"]
    if any(r.get("path") for r in paths):
        print("\nEvery rlsearch path (ann.GPUConfig.Path), same run, same repetitions:\n")
        print("| n | batch | path | ms/batch | q/s | shard read GB/s | of copy bandwidth | vs torch | reps |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in sorted(paths, key=lambda r: (r["n"], r["batch"], r.get("path", ""))):
            t = cell.get((r["n"], r["batch"]), {}).get("torch")
            vs = "%.2f×" % (r["qps"] / t["qps"]) if t else "—"
            of = "%.2f" % (r["shard_gbps"] / bw) if bw and "shard_gbps" in r else "—"
            sg = "%.0f" % r["shard_gbps"] if "shard_gbps" in r else "—"
            print(f"| {r['n']:,} | {r['batch']} | {r.get('path') or 'auto'} | {r['latency_ms']:.2f} | {r['qps']:.0f} | {sg} | {of} | {vs} | {r.get('reps', '—')} |")

    i8 = [r for r in paths if r.get("path") == "int8"]
    if i8:
        print("\nint8 shard on the GPU (ann.GPUConfig.Int8: 1 byte per value; exact over the int8 vectors) against the fp16 "
              "index of the same size (the compared path) and torch fp16, same run:\n")
        print("| n | batch | int8 ms/batch | fp16 ms/batch | int8 speed-up | int8 vs torch | int8 roofline | int8 shard read / copy bandwidth |")
        print("|---|---|---|---|---|---|---|---|")
        for r in sorted(i8, key=lambda r: (r["n"], r["batch"])):
            c = cell.get((r["n"], r["batch"]), {})
            f16, t = c.get("rlsearch"), c.get("torch")
            of = "%.2f" % (r["shard_gbps"] / bw) if bw and "shard_gbps" in r else "—"
            print(f"| {r['n']:,} | {r['batch']} | {r['latency_ms']:.2f} | {f(f16, 'latency_ms', '%.2f')} | "
                  + ("%.2f×" % (f16["latency_ms"] / r["latency_ms"]) if f16 else "—")
                  + f" | {('%.2f×' % (r['qps'] / t['qps'])) if t else '—'} | {r['roofline_fraction']:.2f} | {of} |")

    if copies:
        print("\nDevice-to-device copy (bytes read + written, median of %s):" % ", ".join(str(len(r.get("gbps_all", []))) for r in copies))
        for r in copies:
            print(f"- {r['impl']}: {r['gbps']:.0f} GB/s ({r.get('mib', '?')} MiB)")
    loads = [r for r in rows if r["kind"] == "load"]
    if loads:
        print("\nCorpus generation + upload: " + "; ".join(f"{r['impl']} n={r['n']:,} {r['upload_s']:.1f} s"
                                                         + (f" (+ int8 {r['int8_upload_s']:.1f} s)" if "int8_upload_s" in r else "") for r in loads))
        for r in loads:
            if r.get("paths"):
                print(f"- rlsearch paths: {r['paths']}")
                if r.get("int8_paths"):
                    print(f"- rlsearch int8 paths: {r['int8_paths']}")
                break
    for r in rows:
        if r["kind"] == "http":
            c, o = r["closed"], r["open"]
            print(f"\n/retrieve (package server over the loaded index, n = {r['n']:,}, topk {r['topk']}, one query per request, "
                  f"precomputed query vectors, generated documents): closed loop at concurrency {r['concurrency']}: "
                  f"{c['rps']:.0f} requests/s, p50 {c['p50_ms']:.2f} ms, p99 {c['p99_ms']:.2f} ms ({c['requests']} requests); "
                  f"open loop (Poisson) at {o['rate']:.0f} requests/s: throughput {o['throughput']:.0f}/s, "
                  f"p50 {o['p50_ms']:.2f} ms, p99 {o['p99_ms']:.2f} ms, {o['errors']} errors"
                  + (f"; overflows {r['overflows']}" if "overflows" in r else ""))
    canaries = [r for r in rows if r["kind"] == "canary"]
    if canaries:
        print("\nGPU search canary (ann.SearchCanary, as ann.Open runs it before serving; its cost is the startup cost at each n):\n")
        for r in canaries:
            print(f"- n={r['n']:,}: {r.get('summary')}")
            if r.get("int8_summary"):
                print(f"- n={r['n']:,} int8: {r['int8_summary']}")
    errs = [r for r in rows if r["kind"] == "error"]
    if errs:
        print("\nErrors:")
        for r in errs:
            print(f"- {r['impl']} {r.get('path') or ''} {r['what']}: {r['error']}")


if __name__ == "__main__":
    main()
