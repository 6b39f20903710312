"""Runs the differential suite's programs under CPython with the reference SDK.

usage:
  run_programs.py golden PROGRAMS_DIR GOLDEN_DIR   write GOLDEN_DIR/<name>.txt for every program
                                                  except hostile_* (their expectation is a
                                                  sandbox error code, not CPython output)
  run_programs.py check PROGRAMS_DIR GOLDEN_DIR    exit 1 naming each golden that differs
  run_programs.py stub QUERIES.json K               the stub retriever and reranker's answers for
                                                  each query: JSON [{"sparse": [[id, score]..],
                                                  "dense": .., "rerank": ..}] (rerank of the dense list)
  run_programs.py time PROGRAMS_DIR REPEATS        exec() time per program: JSON
                                                  {"programs": n, "mean_us": .., "median_us": ..,
                                                  "per_program_us": {name: us}}

Run it with PYTHONHASHSEED=0 (sdk's -update does): set iteration order of
strings depends on the hash seed. A program's first line may be
"# question: ..." (the request's question); otherwise stub_sdk.DEFAULT_QUESTION.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stub_sdk  # noqa: E402


def programs(d):
    out = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".py") or name.startswith("hostile_"):
            continue
        with open(os.path.join(d, name), encoding="utf-8", newline="") as f:
            src = f.read()
        out.append((name[:-3], src, question(src)))
    return out


def question(src):
    first = src.split("\n", 1)[0]
    if first.startswith("# question: "):
        return first[len("# question: "):].strip()
    return stub_sdk.DEFAULT_QUESTION


def stub(queries, k):
    out = []
    for q in queries:
        g, _ = stub_sdk.make_sdk(q)
        sp, de = g["sparse"](q, k=k), g["dense"](q, k=k)
        rr = g["rerank"](q, de)
        out.append({name: [[d.id, d.score] for d in docs] for name, docs in (("sparse", sp), ("dense", de), ("rerank", rr))})
    return out


def main():
    mode = sys.argv[1]
    if mode == "stub":
        with open(sys.argv[2], encoding="utf-8") as f:
            print(json.dumps(stub(json.load(f), int(sys.argv[3]))))
        return
    progs = programs(sys.argv[2])
    if mode in ("golden", "check"):
        gdir = sys.argv[3]
        bad = []
        for name, src, q in progs:
            obs = stub_sdk.run(src, q)
            path = os.path.join(gdir, name + ".txt")
            if mode == "golden":
                with open(path + ".tmp", "w", encoding="utf-8", newline="") as f:
                    f.write(obs)
                os.replace(path + ".tmp", path)
            else:
                try:
                    with open(path, encoding="utf-8", newline="") as f:
                        if f.read() != obs:
                            bad.append(name)
                except FileNotFoundError:
                    bad.append(name)
        if bad:
            print("goldens out of date: " + " ".join(bad))
            sys.exit(1)
        print("%d programs" % len(progs))
        return
    if mode == "time":
        repeats = int(sys.argv[3])
        per = {}
        for name, src, q in progs:
            stub_sdk.run(src, q)  # warm caches (imports of allowed modules)
            t0 = time.perf_counter()
            for _ in range(repeats):
                stub_sdk.run(src, q)
            per[name] = (time.perf_counter() - t0) / repeats * 1e6
        vals = list(per.values())
        print(json.dumps({"programs": len(vals), "mean_us": statistics.mean(vals), "median_us": statistics.median(vals), "per_program_us": per}))
        return
    sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
