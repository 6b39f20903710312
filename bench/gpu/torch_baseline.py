#!/usr/bin/env python3
"""PyTorch baseline for bench/gpu/run.sh: torch.topk(q @ D.T) over n synthetic
768-d fp16 unit vectors on one GPU, at the batches the Go benchmark uses.

Prints one JSON line per (n, batch) to stdout, with the same fields as
BenchmarkGPUThroughput (impl "torch"). The corpus is generated on the GPU in
chunks of 1M rows (no fp32 copy of the whole corpus), like the Go side's
synthetic unit vectors (the values differ; the work does not).
"""
import argparse
import json
import time

import torch


def unit(x):
    return x / x.norm(dim=1, keepdim=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1000000", help="comma-separated corpus sizes")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batches", default="1,64,512")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    ap.add_argument("--peak-tflops", type=float, default=790.0)
    ap.add_argument("--peak-tbps", type=float, default=4.3)
    a = ap.parse_args()
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    for n in [int(s) for s in a.n.split(",")]:
        D = torch.empty((n, a.dim), dtype=torch.float16, device=dev)
        for lo in range(0, n, 1 << 20):
            hi = min(lo + (1 << 20), n)
            D[lo:hi] = unit(torch.randn((hi - lo, a.dim), generator=g, device=dev)).half()
        torch.cuda.synchronize()
        for b in [int(s) for s in a.batches.split(",")]:
            q = unit(torch.randn((b, a.dim), generator=g, device=dev)).half()

            def run():
                s, i = torch.topk(q @ D.T, a.k, dim=1)
                return s.float().cpu(), i.cpu()  # results on the host, like the Go API

            run()
            torch.cuda.synchronize()
            iters, t0 = 0, time.perf_counter()
            while True:
                run()
                iters += 1
                el = time.perf_counter() - t0
                if el >= a.seconds and iters >= 3:
                    break
            lat = el / iters
            floor = 2 * n * a.dim * b / (a.peak_tflops * 1e12) + n * a.dim * 2 / (a.peak_tbps * 1e12)
            print(json.dumps({"impl": "torch", "n": n, "dim": a.dim, "batch": b, "k": a.k, "iters": iters,
                              "latency_ms": lat * 1e3, "qps": b / lat, "roofline_ms": floor * 1e3,
                              "roofline_fraction": floor / lat, "torch": torch.__version__,
                              "device": torch.cuda.get_device_name()}), flush=True)
        del D
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
