#!/usr/bin/python3
"""A Search-R1-style retrieval server built from Debian packages: the `serve` peer.

It answers the contract of Search-R1's search_r1/search/retrieval_server.py (FastAPI + uvicorn,
one process, a sync endpoint run on Starlette's thread pool), which is what the users of this
project run today:

  POST /retrieve {"queries": [str], "topk": int (default 3), "return_scores": bool (default false)}
  -> {"result": [[{"document": {"id", "contents"}, "score": float}, ...] per query]}
     (with return_scores false, each inner list holds the bare documents)

Search-R1's BM25 route is Pyserini (Lucene, k1=0.9 b=0.4); Pyserini is not packaged by Debian, so
the sparse route here is Xapian (python3-xapian 1.4) with BM25Weight(k1=0.9, k2=0, k3=1, b=0.4,
min_normlen=0.5), English stemming, OR of the query terms: the same ranking function family and
parameters as ours. The dense route (Search-R1's faiss + E5) is not served: the wiki_multihop corpus
has no precomputed E5 vectors here, so the comparison is sparse only.

  /usr/bin/python3 bench/peers/searchr1_server.py --corpus corpus.jsonl --index DIR --port 8001

The Xapian database is built into --index on first use (atomically: temp dir + rename) and reused.
Also serves GET /healthz -> {"status": "ok", "docs": N}.
Packages: python3-fastapi python3-uvicorn python3-xapian (`make bench-setup`).
"""
import argparse
import json
import os
import shutil
import sys
import threading
import time
from typing import List, Optional

import xapian

K1, B = 0.9, 0.4  # Pyserini's BM25 defaults, as ours (bm25.DefaultK1, DefaultB)


def read_corpus(path):
    docs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            if "contents" not in d:  # {id, title, text} form
                d = {"id": d.get("id"), "contents": '"%s"\n%s' % (d.get("title", ""), d.get("text", ""))}
            docs.append({"id": str(d["id"]), "contents": d["contents"]})
    return docs


def build(docs, path):
    tmp = path + ".tmp-%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    db = xapian.WritableDatabase(tmp, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    tg.set_stemmer(xapian.Stem("english"))
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    for i, d in enumerate(docs):
        doc = xapian.Document()
        tg.set_document(doc)
        tg.index_text(d["contents"])
        doc.set_data(str(i))
        db.add_document(doc)
    db.commit()
    db.close()
    if os.path.exists(path):
        shutil.rmtree(path)
    os.rename(tmp, path)


class Searcher:
    """Thread-safe: one Xapian Database per thread (Xapian objects are not shareable)."""

    def __init__(self, path, docs):
        self.path, self.docs, self.local = path, docs, threading.local()

    def _state(self):
        st = getattr(self.local, "st", None)
        if st is None:
            db = xapian.Database(self.path)
            qp = xapian.QueryParser()
            qp.set_stemmer(xapian.Stem("english"))
            qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
            qp.set_database(db)
            qp.set_default_op(xapian.Query.OP_OR)
            enq = xapian.Enquire(db)
            enq.set_weighting_scheme(xapian.BM25Weight(K1, 0, 1, B, 0.5))
            st = self.local.st = (db, qp, enq)
        return st

    def search(self, query, k):
        _, qp, enq = self._state()
        q = qp.parse_query(query, 0)  # no boolean/phrase syntax: a question is plain text
        enq.set_query(q)
        out = []
        for m in enq.get_mset(0, k):
            out.append((self.docs[int(m.document.get_data())], float(m.weight)))
        return out


def make_app(searcher, ndocs):
    from fastapi import FastAPI
    from pydantic import BaseModel

    class QueryRequest(BaseModel):
        queries: List[str]
        topk: Optional[int] = None
        return_scores: bool = False

    app = FastAPI()

    @app.post("/retrieve")
    def retrieve_endpoint(request: QueryRequest):  # sync def: thread pool, as Search-R1's
        k = request.topk or 3
        resp = []
        for q in request.queries:
            hits = searcher.search(q, k)
            if request.return_scores:
                resp.append([{"document": d, "score": s} for d, s in hits])
            else:
                resp.append([d for d, _ in hits])
        return {"result": resp}

    @app.get("/healthz")
    def healthz():
        return {"status": "ok", "docs": ndocs, "retriever": "xapian-bm25"}

    return app


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="corpus JSONL ({id, contents} or {id, title, text})")
    ap.add_argument("--index", required=True, help="Xapian database directory (built when missing)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--build-only", action="store_true", help="build the index and exit")
    args = ap.parse_args()

    t0 = time.time()
    docs = read_corpus(args.corpus)
    if not os.path.exists(os.path.join(args.index, "iamglass")) and not os.path.exists(os.path.join(args.index, "iamchert")):
        print(f"searchr1_server: indexing {len(docs)} passages into {args.index}", file=sys.stderr, flush=True)
        build(docs, args.index)
    elif xapian.Database(args.index).get_doccount() != len(docs):
        print(f"searchr1_server: {args.index} does not hold {len(docs)} passages: rebuilding", file=sys.stderr, flush=True)
        build(docs, args.index)
    print(f"searchr1_server: {len(docs)} passages ready in {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
    if args.build_only:
        return
    import uvicorn
    uvicorn.run(make_app(Searcher(args.index, docs), len(docs)), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
