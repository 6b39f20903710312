#!/usr/bin/env python3
"""Reward throughput through verl's three reward paths, side by side, in one run.

    make bench-integrations                                   # builds a BM25 index of wiki_multihop, serves it
    python3 integrations/bench_rewards.py --url http://127.0.0.1:8000 [--reps 15] [--qa 4096] [--rpl 512]

Paths (the stand-ins of integrations/tests/upstream.py, which mirror verl at b178a3c):
- batch: BatchRewardManager -> compute_score_batch (one request per kind for the batch);
- reward loop, async: RewardLoop (verl >= 0.7) -> compute_score_async, one coroutine per sample, all at once;
- reward loop, plain: RewardLoop -> compute_score in the loop's default thread pool;
- reward loop, no-op function: the same loop around a coroutine that returns at once (verl's own per-sample cost,
  which the reward loop pays whatever the reward function does).
QA: 4,096 samples from the 763 wiki_multihop questions (right, wrong and missing answers). RPL: 512 rollouts whose
<code> programs (two per rollout, Search-R1 style with their <information> observations) are replayed on
/v1/programs/execute before scoring. Repetitions are interleaved (batch, async, plain, batch, ...); the table gives
medians and the ratio to the batch path of the same repetition.
"""

import argparse
import json
import os
import statistics
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from integrations import rewards  # noqa: E402
from integrations.localserver import LocalServer, data_dir  # noqa: E402
from integrations.tests import upstream  # noqa: E402

PROGRAMS = ("print(sparse(question, k=3))", "docs = fuse(sparse(question, k=20), sparse(question + \" history\", k=20))\n"
            "print(docs[:5])")


def load_questions():
    with open(os.path.join(data_dir(), "wiki_multihop", "questions.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def qa_samples(qs, n):
    out = []
    for i in range(n):
        q = qs[i % len(qs)]
        ans = [q["golden_answers"][0], "not the answer", ""][i % 3]
        sol = f"<think>t</think><answer>{ans}</answer>" if ans else "<think>no answer</think>"
        out.append(upstream.Sample("searchR1_hotpotqa", sol, {"target": q["golden_answers"]}, {"question": q["question"]}))
    return out


def rpl_samples(url, qs, n):
    client = rewards.settings(url=url).client()
    reqs = [{"code": p, "question": qs[i % len(qs)]["question"]} for i in range(n) for p in PROGRAMS]
    res, _ = client.execute(reqs)
    out = []
    for i in range(n):
        q = qs[i % len(qs)]
        sol = ""
        for j, p in enumerate(PROGRAMS):
            sol += f"<think>step {j}</think>\n<code>\n{p}\n</code>\n\n<information>{res[2 * i + j]['observation'].strip()}" \
                   f"</information>\n\n"
        sol += f"<answer>{q['golden_answers'][0] if i % 2 else 'wrong'}</answer>"
        out.append(upstream.Sample("rpl", sol, {"target": q["golden_answers"], "gold_ids": q["gold_passage_ids"]},
                                   {"question": q["question"]}))
    return out


async def _noop(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """A reward function that does nothing: what verl's per-sample loop costs by itself."""
    return {"score": 0.0}


def timed(fn):
    t0 = time.perf_counter()
    scores = fn()
    return time.perf_counter() - t0, scores


def run(url, reps, n_qa, n_rpl):
    qs = load_questions()
    work = {"qa": qa_samples(qs, n_qa), "rpl": rpl_samples(url, qs, n_rpl)}
    paths = {
        "batch": lambda kind, s: upstream.BatchRewardManager(rewards.compute_score_batch, kind=kind, url=url)(s)[0],
        "reward loop, async": lambda kind, s: upstream.RewardLoop(
            {"reward_kwargs": {"kind": kind, "url": url}}, rewards.compute_score_async).run(s)[0],
        "reward loop, plain": lambda kind, s: upstream.RewardLoop(
            {"reward_kwargs": {"kind": kind, "url": url}}, rewards.compute_score).run(s)[0],
        "reward loop, no-op function": lambda kind, s: upstream.RewardLoop({}, _noop).run(s)[0],
    }
    times = {(k, p): [] for k in work for p in paths}
    ratios = {(k, p): [] for k in work for p in paths}
    for kind, samples in work.items():
        want = None
        for _ in range(reps):
            base = None
            for p, fn in paths.items():
                t, scores = timed(lambda: fn(kind, samples))
                if want is None:
                    want = scores
                if p != "reward loop, no-op function" and scores != want:
                    raise SystemExit(f"bench: {kind} scores through {p!r} differ from the batch path's")
                times[(kind, p)].append(t)
                base = t if p == "batch" else base
                ratios[(kind, p)].append(t / base)
    rows = []
    for (kind, p), ts in times.items():
        n = len(work[kind])
        med = statistics.median(ts)
        rows.append({"kind": kind, "path": p, "samples": n, "median_s": med, "min_s": min(ts), "max_s": max(ts),
                     "samples_per_s": n / med, "ratio_to_batch": statistics.median(ratios[(kind, p)])})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="running rlsearch server; default: build out/integrations-bench and serve it")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--qa", type=int, default=4096)
    ap.add_argument("--rpl", type=int, default=512)
    ap.add_argument("--out", help="write the rows as JSON here")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    if args.url:
        rows = run(args.url, args.reps, args.qa, args.rpl)
    else:
        with LocalServer(index_dir=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out",
                                                "integrations-bench")) as srv:
            rows = run(srv.url, args.reps, args.qa, args.rpl)
    load1 = os.getloadavg()
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f}; {os.cpu_count()} CPUs; {args.reps} interleaved reps")
    print("| kind | path | samples | median s (min–max) | samples/s | time / batch path |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['kind']} | {r['path']} | {r['samples']:,} | {r['median_s']:.3f} ({r['min_s']:.3f}–{r['max_s']:.3f}) "
              f"| {r['samples_per_s']:,.0f} | {r['ratio_to_batch']:.2f}× |")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"load": [load0, load1], "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
