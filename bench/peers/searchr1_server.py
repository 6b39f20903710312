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
parameters as ours.

The dense route (Search-R1's faiss + E5), with --dense DIR: faiss IndexFlatIP (exact inner product, as
Search-R1's flat index) over DIR/base.fvecs, the passage vectors of our index's vector file (dense.shard) widened to
float32 (row i is passage DIR/base_ids.jsonl line i). With --encoder MODEL, each request's queries are
encoded as Search-R1 does it: torch (Debian's python3-torch 1.13.1, CPU, fp32) running the E5 BertModel
of MODEL/model.safetensors with the "query: " prefix, mean pooling and L2 normalisation, one padded batch
per request (e5_torch.py; transformers is not packaged by Debian, so the module and the WordPiece tokenizer
are written there and checked against ours by TestTorchEncoderAgrees). This is the peer the serve suite
measures. Without --encoder the peer looks each query text up in a table precomputed by the same model
(DIR/queries.jsonl line i -> DIR/queries.fvecs row i; a query not in the table is a 400): less work per
query than a real Search-R1 server, kept for checks that need no torch. bench/peers/serve_dense.go writes
all four files. A request picks the route with "retriever": "bm25" | "e5" (our extension); the default is
"e5" when --dense is given, else "bm25", as ours.

  /usr/bin/python3 bench/peers/searchr1_server.py --corpus corpus.jsonl [--index DIR] --port 8001 \
      [--dense VECDIR [--encoder MODEL] [--threads N]]

The Xapian database is built into --index on first use (atomically: temp dir + rename) and reused. Without
--index there is no bm25 route (a 400), as a Search-R1 server runs one retriever; --dense is then required.
Also serves GET /healthz -> {"status": "ok", "docs": N}.
Packages: python3-fastapi python3-uvicorn python3-xapian, python3-faiss python3-numpy for --dense, and
python3-torch for --encoder
(`make bench-setup`; the faiss AVX2 build when bench/peers/setup-faiss-avx2.sh built it, on PYTHONPATH).
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


def read_fvecs(path):
    """A TEXMEX .fvecs file (per row: int32 dimension, then float32 values) as a float32 matrix."""
    import numpy as np

    raw = np.fromfile(path, dtype="<i4")
    if raw.size == 0:
        sys.exit(f"{path}: empty")
    d = int(raw[0])
    if d < 1 or raw.size % (d + 1) != 0:
        sys.exit(f"{path}: not an .fvecs file (dimension {d}, {raw.size} words)")
    rows = raw.reshape(-1, d + 1)
    if (rows[:, 0] != d).any():
        sys.exit(f"{path}: rows of differing dimension")
    return np.ascontiguousarray(rows[:, 1:].view("<f4").astype(np.float32))


def read_lines_json(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Dense:
    """faiss IndexFlatIP over precomputed passage vectors. Queries are encoded per request by the torch E5
    encoder (e5_torch.py) when one is given, as Search-R1's server does, else looked up by text in the
    precomputed table. Thread-safe (faiss search on a built flat index is read-only; encodes are serialised
    by encode_lock)."""

    def __init__(self, vdir, docs, encoder_dir=None, threads=0):
        import faiss
        import numpy as np

        self.np = np
        base = read_fvecs(os.path.join(vdir, "base.fvecs"))
        ids = read_lines_json(os.path.join(vdir, "base_ids.jsonl"))
        if len(ids) != base.shape[0]:
            sys.exit(f"{vdir}: {base.shape[0]} passage vectors, {len(ids)} ids")
        by_id = {d["id"]: d for d in docs}
        missing = [i for i in ids if i not in by_id]
        if missing:
            sys.exit(f"{vdir}: passage id {missing[0]!r} (and {len(missing) - 1} more) not in the corpus")
        self.rows = [by_id[i] for i in ids]
        self.index = faiss.IndexFlatIP(base.shape[1])
        self.index.add(base)
        self.faiss = faiss
        self.encoder, self.table = None, None
        if encoder_dir:
            import torch

            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from e5_torch import Encoder

            if threads > 0:
                torch.set_num_threads(threads)
            self.torch = torch
            self.encoder = Encoder(encoder_dir)
            # One encode at a time, on all of torch's intra-op threads. Debian's torch does its matmuls in the
            # system BLAS, which is the OpenMP OpenBLAS here (faissEnv's LD_LIBRARY_PATH, for faiss's threads);
            # that build is not safe to enter from several threads at once: concurrent encodes on Starlette's
            # thread pool hung for 10 s and more. On 2 cores this costs no throughput (the FLOPs are the same).
            self.encode_lock = threading.Lock()
            self.encoder.encode(["warm-up"])  # first-call set-up outside the measurement, as ours probes at start
            if self.encoder.dim != base.shape[1]:
                sys.exit(f"{encoder_dir}: encoder dimension {self.encoder.dim}, passage vectors {base.shape[1]}")
            return
        qv = read_fvecs(os.path.join(vdir, "queries.fvecs"))
        texts = read_lines_json(os.path.join(vdir, "queries.jsonl"))
        if len(texts) != qv.shape[0] or qv.shape[1] != base.shape[1]:
            sys.exit(f"{vdir}: {len(texts)} query texts, query vectors {qv.shape}, passage vectors {base.shape}")
        self.table = {t: i for i, t in enumerate(texts)}
        self.qv = qv

    def search_batch(self, queries, k):
        """Hits per query; raises KeyError naming the first query not in the table."""
        np = self.np
        out = [[] for _ in queries]
        if self.encoder is not None:
            where = [j for j, q in enumerate(queries) if q.strip()]
            if where:
                with self.encode_lock:
                    qv = self.encoder.encode([queries[j] for j in where])  # one padded batch per request, as Search-R1
                k = min(k, self.index.ntotal)
                scores, idx = self.index.search(qv, k)
                for n, j in enumerate(where):
                    out[j] = [(self.rows[int(r)], float(s)) for r, s in zip(idx[n], scores[n]) if r >= 0]
            return out
        rows, where = [], []
        for j, q in enumerate(queries):
            if not q.strip():
                continue
            i = self.table.get(q)
            if i is None:
                raise KeyError(j)
            rows.append(i)
            where.append(j)
        if rows:
            k = min(k, self.index.ntotal)
            scores, idx = self.index.search(self.qv[np.asarray(rows)], k)
            for n, j in enumerate(where):
                out[j] = [(self.rows[int(r)], float(s)) for r, s in zip(idx[n], scores[n]) if r >= 0]
        return out


def make_app(searcher, ndocs, dense=None):
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel

    class QueryRequest(BaseModel):
        queries: List[str]
        topk: Optional[int] = None
        return_scores: bool = False
        retriever: Optional[str] = None  # our extension: "bm25" | "e5"

    app = FastAPI()

    @app.post("/retrieve")
    def retrieve_endpoint(request: QueryRequest):  # sync def: thread pool, as Search-R1's
        k = request.topk or 3
        route = request.retriever or ("e5" if dense is not None else "bm25")
        if route == "e5":
            if dense is None:
                raise HTTPException(status_code=400, detail="retriever e5: no dense index (start with --dense)")
            try:
                all_hits = dense.search_batch(request.queries, k)
            except KeyError as e:
                j = e.args[0]
                raise HTTPException(status_code=400, detail=f"queries[{j}] {request.queries[j][:80]!r} has no precomputed vector")
        elif route == "bm25":
            if searcher is None:
                raise HTTPException(status_code=400, detail="retriever bm25: no Xapian index (start with --index)")
            all_hits = [searcher.search(q, k) for q in request.queries]
        else:
            raise HTTPException(status_code=400, detail=f"retriever {route!r}: want bm25 or e5")
        resp = []
        for hits in all_hits:
            if request.return_scores:
                resp.append([{"document": d, "score": s} for d, s in hits])
            else:
                resp.append([d for d, _ in hits])
        return {"result": resp}

    @app.get("/healthz")
    def healthz():
        h = {"status": "ok", "docs": ndocs, "retriever": "xapian-bm25" if searcher is not None else "e5"}
        if dense is not None:
            h["dense"] = {"faiss": dense.faiss.__version__, "vectors": dense.index.ntotal, "faiss_file": dense.faiss.__file__}
            if dense.encoder is not None:
                h["dense"]["encoder"] = {"torch": dense.torch.__version__, "threads": dense.torch.get_num_threads(),
                                         "dim": dense.encoder.dim}
            else:
                h["dense"]["queries"] = len(dense.table)
        return h

    return app


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="corpus JSONL ({id, contents} or {id, title, text})")
    ap.add_argument("--index", help="Xapian database directory (built when missing): serve the bm25 route; optional "
                    "with --dense, as Search-R1 runs one retriever per server")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--build-only", action="store_true", help="build the index and exit")
    ap.add_argument("--dense", help="directory of base.fvecs, base_ids.jsonl (and, without --encoder, queries.fvecs, "
                    "queries.jsonl): serve the e5 route")
    ap.add_argument("--encoder", help="E5 model directory (config.json, model.safetensors, tokenizer.json, rlsearch.json): "
                    "encode each request's queries with torch (e5_torch.py) instead of the precomputed table")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    args = ap.parse_args()
    if not args.index and not args.dense:
        ap.error("give --index (the bm25 route), --dense (the e5 route), or both")
    if args.build_only and not args.index:
        ap.error("--build-only builds the --index database: give --index")

    t0 = time.time()
    docs = read_corpus(args.corpus)
    if args.index:
        if not os.path.exists(os.path.join(args.index, "iamglass")) and not os.path.exists(os.path.join(args.index, "iamchert")):
            print(f"searchr1_server: indexing {len(docs)} passages into {args.index}", file=sys.stderr, flush=True)
            build(docs, args.index)
        elif xapian.Database(args.index).get_doccount() != len(docs):
            print(f"searchr1_server: {args.index} does not hold {len(docs)} passages: rebuilding", file=sys.stderr, flush=True)
            build(docs, args.index)
    print(f"searchr1_server: {len(docs)} passages ready in {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
    if args.build_only:
        return
    dense = None
    if args.dense:
        t1 = time.time()
        dense = Dense(args.dense, docs, args.encoder, args.threads)
        how = (f"torch {dense.torch.__version__} encoder ({dense.torch.get_num_threads()} threads)" if dense.encoder
               else f"{len(dense.table)} precomputed queries")
        print(f"searchr1_server: faiss {dense.faiss.__version__} ({dense.faiss.__file__}) IndexFlatIP over "
              f"{dense.index.ntotal} vectors, {how}, in {time.time() - t1:.1f}s", file=sys.stderr, flush=True)
    import uvicorn
    searcher = Searcher(args.index, docs) if args.index else None
    uvicorn.run(make_app(searcher, len(docs), dense), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
