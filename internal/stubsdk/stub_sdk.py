"""CPython 3 peer of the Go program runtime for BenchmarkStarlarkOverhead.

Runs the same retrieval programs against an in-process stub SDK that
mirrors sdk's stub in bench_test.go (stubRetriever, stubCorpus, stubReranker):
a retrieval call of width k returns rows 0..k-1 shifted by a hash of the
query, RRF k = 60, rerank by a fixed function of the contents, print renders
"Doc {i}(Title: {title_line}) {text}" (sdk.DefaultDocFormat). Programs are exec()'d with the SDK as
globals, as a Python sandbox would run them (no isolation: this measures
interpretation cost only).

usage: stub_sdk.py PROGRAMS.json REPEATS   ->  prints microseconds per program
"""
import json
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
    def title_line(self):
        return self.contents.split("\n", 1)[0]

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
                    out.append("Doc %d(Title: %s) %s\n" % (n, d.title_line, d.text))
            return
        out.append(" ".join(str(a) for a in args) + "\n")

    return {"dense": dense, "sparse": sparse, "fuse": fuse, "dedup": dedup, "rerank": rerank, "print": print_, "question": "stub question"}


def main():
    programs = json.load(open(sys.argv[1]))
    repeats = int(sys.argv[2])
    codes = [compile(p, "program", "exec") for p in programs]  # parsing counted below too
    t0 = time.perf_counter()
    n = 0
    for _ in range(repeats):
        for src in programs:
            out = []
            exec(compile(src, "program", "exec"), make_sdk(out))
            n += 1
    dt = time.perf_counter() - t0
    print("%.3f" % (dt / n * 1e6))


if __name__ == "__main__":
    main()
