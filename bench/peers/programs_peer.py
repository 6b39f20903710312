#!/usr/bin/python3
"""CPython peer of the `programs` suite of `rlsearch bench` (run by package bench/peers).

The same rollout programs (Starlark is Python syntax) executed by CPython 3 with exec() against a
stub SDK with the semantics of sdk's primitives over precomputed result lists: a retrieval call of
width k returns rows 0..k-1 shifted by a hash of the query (CRC-32 % 97, stride 7, 1000 stub docs),
dedup keeps the first of equal ids and refuses one id with two contents, fuse is RRF with k = 60
(ties by row then id), rerank scores len(contents) % 7, print renders "Doc {i}(Title: {title}) {text}".
This is sdk/testdata/stub_sdk.py (BenchmarkStarlarkOverhead's peer); bench/peers checks that its
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
import zlib

N_DOCS = 1000


class Doc:
    __slots__ = ("id", "contents", "row", "score", "routes")

    def __init__(self, id, contents, row, score, routes):
        self.id, self.contents, self.row, self.score, self.routes = id, contents, row, score, routes

    @property
    def title(self):
        return self.contents.split("\n", 1)[0].strip('"')

    @property
    def text(self):
        return self.contents.split("\n", 1)[1]


def corpus(row):
    return "doc-%d" % row, '"Title %d"\nText of stub passage %d.' % (row, row)


def search(route, query, k):
    off = zlib.crc32(query.encode()) % 97
    out = []
    for i in range(k):
        row = (off + i * 7) % N_DOCS
        id_, contents = corpus(row)
        out.append(Doc(id_, contents, row, 1.0 / (i + 1), (route,)))
    return out


def make_sdk(out):
    def dense(query, k=10):
        return search("dense", query, k)

    def sparse(query, k=10):
        return search("sparse", query, k)

    def dedup(docs):
        seen, res = {}, []
        for d in docs:
            if d.id in seen:
                if seen[d.id] != d.contents:
                    raise ValueError("conflict " + d.id)
                continue
            seen[d.id] = d.contents
            res.append(d)
        return res

    def fuse(*lists, k=60):
        if len(lists) == 1 and lists[0] and isinstance(lists[0][0], list):
            lists = lists[0]
        acc, order = {}, []
        for l in lists:
            for r, d in enumerate(dedup(l)):
                if d.id not in acc:
                    acc[d.id] = [d, [], set()]
                    order.append(d.id)
                acc[d.id][1].append(r + 1)
                acc[d.id][2].update(d.routes)
        res = []
        for i in order:
            d, ranks, routes = acc[i]
            s = sum(1.0 / (k + r) for r in sorted(ranks, reverse=True))
            res.append(Doc(d.id, d.contents, d.row, s, tuple(sorted(routes))))
        res.sort(key=lambda d: (-d.score, d.row, d.id))
        return res

    def rerank(query, docs, k=None):
        docs = dedup(docs)
        if k is None:
            k = len(docs)
        scores = [float(len(d.contents) % 7) for d in docs]
        idx = sorted(range(len(docs)), key=lambda i: -scores[i])
        return [Doc(docs[i].id, docs[i].contents, docs[i].row, scores[i], docs[i].routes) for i in idx[:k]]

    def print_(*args):
        if args and all(isinstance(a, (Doc, list, tuple)) for a in args):
            n = len(out)
            for a in args:
                for d in (a if isinstance(a, (list, tuple)) else [a]):
                    n += 1
                    out.append("Doc %d(Title: %s) %s\n" % (n, d.title, d.text))
            return
        out.append(" ".join(str(a) for a in args) + "\n")

    return {"dense": dense, "sparse": sparse, "fuse": fuse, "dedup": dedup, "rerank": rerank, "print": print_, "question": "stub question"}



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
