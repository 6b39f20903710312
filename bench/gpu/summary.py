#!/usr/bin/env python3
"""Joins the JSON lines of BenchmarkGPUThroughput (impl rlsearch) and
torch_baseline.py (impl torch) into a Markdown table: queries/s, latency,
roofline fraction and the ratio rlsearch / torch for each (n, batch)."""
import json
import sys

rows = {}
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    rows.setdefault((r["n"], r["batch"]), {})[r["impl"]] = r
    except FileNotFoundError:
        print(f"(missing {path})")
print("| n | batch | rlsearch q/s | ms/batch | roofline | torch q/s | ms/batch | roofline | rlsearch/torch |")
print("|---|---|---|---|---|---|---|---|---|")
for (n, b) in sorted(rows):
    r, t = rows[(n, b)].get("rlsearch"), rows[(n, b)].get("torch")
    def f(x, key, fmt):
        return fmt % x[key] if x else "—"
    ratio = "%.2f×" % (r["qps"] / t["qps"]) if r and t else "—"
    print(f"| {n:,} | {b} | {f(r,'qps','%.0f')} | {f(r,'latency_ms','%.2f')} | {f(r,'roofline_fraction','%.2f')} "
          f"| {f(t,'qps','%.0f')} | {f(t,'latency_ms','%.2f')} | {f(t,'roofline_fraction','%.2f')} | {ratio} |")
