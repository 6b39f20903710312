"""Python reference SDK of sdk's differential suite (TestPythonDifferential).

The same primitives as the Go sandbox (sdk/primitives.go, builtins.go,
runtime.go) with the same semantics and messages, over the fixed stub
retriever that sdk/pydiff_test.go implements identically in Go:

  documents   docs.jsonl next to this file, row = line number (0-based)
  terms(s)    maximal runs of ASCII letters and digits, ASCII-lowercased
              (non-ASCII characters separate terms; no Unicode case folding,
              so Go and Python agree byte for byte)
  sparse(q,k) documents sharing a term with q; score = sum over the distinct
              terms t of q present in the document of
              w(t) * (8 + min(tf, 8)) / 8, w = 2 when len(t) > 3 else 1;
              descending score, ties by ascending row, first k
  dense(q,k)  every document; score = (distinct q terms present) / 4
              + ((h + 29 * row) % 64) / 1024, h = first byte of sha256(q);
              descending score, ties by ascending row, first k
  rerank      score = 2 * (distinct q terms in the title)
              + (distinct q terms in the text) + (len(contents) % 5) / 8;
              stable by descending score (ties keep input order)
  tokens      observation tokens of one print = ceil(UTF-8 bytes / 4)

Every score is a dyadic rational well inside float32 precision, so the Go
retriever's float32 hits and these float64 scores are the same numbers.

Errors end the program with the sandbox's envelope, appended to what was
printed: "Error (<code>): line N: <message>\\n", N the innermost line of the
program. SDK failures carry their sandbox code and message; a budget
failure derives from BaseException (a program's `except Exception` does not
catch it); any other uncaught Python exception is runtime_error with
message "<Type>: <str(e)>" (the last line of Python's traceback).

run_programs.py drives it (goldens, timing).
"""
import hashlib
import json
import math
import os
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))

MAX_CALLS = 16
MAX_CANDIDATES = 1000
MAX_WIDTH = 50
MAX_RERANK_DOCS = 400
MAX_PRINTED_DOCS = 20
MAX_OBS_TOKENS = 2048
MAX_OBS_BYTES = 256 << 10
MAX_QUERY_BYTES = 2048
RRF_K = 60
DEFAULT_K = 10
DEFAULT_QUESTION = "who directed the 2018 film Robin Hood"


def _load_docs():
    rows = []
    with open(os.path.join(HERE, "docs.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            rows.append((d["id"], d["contents"]))
    return rows


ROWS = _load_docs()


def terms(s):
    out, cur = [], []
    for ch in s:
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            cur.append(ch)
        elif "A" <= ch <= "Z":
            cur.append(chr(ord(ch) + 32))
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def distinct(xs):
    seen, out = set(), []
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def split_contents(contents):
    if "\n" not in contents:
        return "", "", contents
    first, rest = contents.split("\n", 1)
    title = first
    if title.startswith('"'):
        title = title[1:]
    if title.endswith('"'):
        title = title[:-1]
    return title, first, rest


DOC_TERMS = [terms(c) for _, c in ROWS]


def go_quote(s):
    """Go's %q of an ASCII-or-printable string (the messages the sandbox writes)."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(x):
    """Go's %v of a float64 for the values messages show (integral values without ".0")."""
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


class SDKError(Exception):
    """A primitive's failure with its sandbox error code; str(e) is the message."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


class BudgetExceeded(BaseException):
    """A budget failure: never caught by `except Exception`."""

    def __init__(self, msg):
        super().__init__(msg)
        self.code = "budget_exceeded"
        self.msg = msg


class Doc:
    __slots__ = ("_id", "_contents", "_row", "_score", "_routes")

    def __init__(self, id, contents, row, score, routes):
        self._id, self._contents, self._row, self._score, self._routes = id, contents, row, score, tuple(routes)

    id = property(lambda self: self._id)
    contents = property(lambda self: self._contents)
    score = property(lambda self: self._score)
    routes = property(lambda self: self._routes)
    title = property(lambda self: split_contents(self._contents)[0])
    text = property(lambda self: split_contents(self._contents)[2])

    def __repr__(self):
        return "Doc(id=%r, title=%r, score=%r)" % (self._id, self.title, self._score)

    __str__ = __repr__

    def __eq__(self, other):
        if not isinstance(other, Doc):
            return NotImplemented
        return self._id == other._id and self._contents == other._contents

    def __hash__(self):
        return hash(self._id)

    def _with(self, score, routes=None):
        return Doc(self._id, self._contents, self._row, score, self._routes if routes is None else routes)


def _tname(v):
    return type(v).__name__


def _to_docs(fn, what, v):
    if isinstance(v, str):
        raise SDKError("runtime_error", "%s: %s must be a list of documents, got string" % (fn, what))
    if not isinstance(v, (list, tuple)):
        raise SDKError("runtime_error", "%s: %s must be a list of documents, got %s" % (fn, what, _tname(v)))
    for i, d in enumerate(v):
        if not isinstance(d, Doc):
            raise SDKError("runtime_error", "%s: %s[%d] must be a document, got %s" % (fn, what, i, _tname(d)))
    return list(v)


def _conflict(id_):
    return SDKError("document_conflict", "document id %s appears with different contents" % go_quote(id_))


def _dedup(docs):
    seen, out = {}, []
    for d in docs:
        if d.id in seen:
            if seen[d.id] != d.contents:
                raise _conflict(d.id)
            continue
        seen[d.id] = d.contents
        out.append(d)
    return out


def _sparse_scores(query):
    qt = distinct(terms(query))
    scored = []
    for row, dt in enumerate(DOC_TERMS):
        s = 0.0
        for t in qt:
            tf = dt.count(t)
            if tf:
                w = 2 if len(t) > 3 else 1
                s += w * (8 + min(tf, 8)) / 8
        if s > 0:
            scored.append((s, row))
    return scored


def _dense_scores(query):
    qt = distinct(terms(query))
    h = hashlib.sha256(query.encode("utf-8")).digest()[0]
    scored = []
    for row, dt in enumerate(DOC_TERMS):
        present = set(dt)
        overlap = sum(1 for t in qt if t in present)
        scored.append((overlap / 4 + ((h + 29 * row) % 64) / 1024, row))
    return scored


_RANKED = {}


def _ranked(route, query):
    """The full ranking of a (route, query), memoised per process (as the Go
    stub does), so that timings measure the interpreter, not the stub."""
    key = (route, query)
    r = _RANKED.get(key)
    if r is None:
        r = _dense_scores(query) if route == "dense" else _sparse_scores(query)
        r.sort(key=lambda sr: (-sr[0], sr[1]))
        r = tuple(r)
        _RANKED[key] = r
    return r


def rerank_score(query, contents):
    qt = distinct(terms(query))
    title, _, text = split_contents(contents)
    tt, xt = set(terms(title)), set(terms(text))
    return 2 * sum(1 for t in qt if t in tt) + sum(1 for t in qt if t in xt) + (len(contents.encode("utf-8")) % 5) / 8


class _State:
    def __init__(self, question):
        self.question = question
        self.out = []
        self.out_bytes = 0
        self.tokens = 0
        self.printed_docs = 0
        self.calls = 0
        self.candidates = 0
        self.seen = {}

    def search(self, route, query, k):
        if not isinstance(query, str):
            raise SDKError("runtime_error", "%s: query must be a string, got %s" % (route, _tname(query)))
        if not isinstance(k, int) or isinstance(k, bool):
            raise SDKError("runtime_error", "%s: k must be an int, got %s" % (route, _tname(k)))
        n = self.calls + 1
        if n > MAX_CALLS:
            raise BudgetExceeded("call budget exceeded: %d retrieval calls, the cap is %d" % (n, MAX_CALLS))
        if k < 1:
            raise SDKError("runtime_error", "%s: k = %d must be ≥ 1" % (route, k))
        if k > MAX_WIDTH:
            raise BudgetExceeded("%s: width k = %d exceeds the cap of %d" % (route, k, MAX_WIDTH))
        qb = len(query.encode("utf-8"))
        if qb > MAX_QUERY_BYTES:
            raise BudgetExceeded("%s: query of %d bytes exceeds the cap of %d" % (route, qb, MAX_QUERY_BYTES))
        scored = _ranked(route, query)
        docs = [Doc(ROWS[row][0], ROWS[row][1], row, s, (route,)) for s, row in scored[:k]]
        self.calls += 1
        self.candidates += len(docs)
        if self.candidates > MAX_CANDIDATES:
            raise BudgetExceeded("candidate budget exceeded: %d documents retrieved, the cap is %d" % (self.candidates, MAX_CANDIDATES))
        for d in docs:
            self.seen[d.id] = d
        return docs

    def emit(self, text, ndocs):
        b = len(text.encode("utf-8"))
        if self.printed_docs + ndocs > MAX_PRINTED_DOCS:
            raise BudgetExceeded("printed-document budget exceeded: %d documents printed, the cap is %d" % (self.printed_docs + ndocs, MAX_PRINTED_DOCS))
        if self.out_bytes + b > MAX_OBS_BYTES:
            raise BudgetExceeded("observation budget exceeded: over %d bytes printed" % MAX_OBS_BYTES)
        t = (b + 3) // 4
        if self.tokens + t > MAX_OBS_TOKENS:
            raise BudgetExceeded("observation budget exceeded: printing this would make %d tokens, the cap is %d" % (self.tokens + t, MAX_OBS_TOKENS))
        self.out.append(text)
        self.out_bytes += b
        self.tokens += t
        self.printed_docs += ndocs


def _doc_args(args):
    if not args:
        return None
    out = []
    for a in args:
        if isinstance(a, Doc):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            for d in a:
                if not isinstance(d, Doc):
                    return None
                out.append(d)
        else:
            return None
    return out


def make_sdk(question=DEFAULT_QUESTION):
    """Returns (globals for exec, state); state.out collects the observation."""
    st = _State(question)

    def dense(query, k=DEFAULT_K):
        return st.search("dense", query, k)

    def sparse(query, k=DEFAULT_K):
        return st.search("sparse", query, k)

    def dedup(docs):
        return _dedup(_to_docs("dedup", "docs", docs))

    def fuse(*lists, k=None):
        rrf = RRF_K
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, (int, float)):
                raise SDKError("runtime_error", "fuse: k must be a number, got %s" % _tname(k))
            rrf = float(k)
        lists = list(lists)
        if len(lists) == 1:
            l = lists[0]
            if isinstance(l, (list, tuple)) and len(l) > 0 and isinstance(l[0], (list, tuple)):
                lists = list(l)
        ins = [_to_docs("fuse", "list %d" % (i + 1), l) for i, l in enumerate(lists)]
        if rrf < 0 or math.isnan(rrf) or math.isinf(rrf):
            raise SDKError("runtime_error", "fuse: k = %s must be a finite number ≥ 0" % go_float(rrf))
        acc, order = {}, []
        for l in ins:
            for r, d in enumerate(_dedup(l)):
                a = acc.get(d.id)
                if a is None:
                    a = [d, [], []]
                    acc[d.id] = a
                    order.append(a)
                elif a[0].contents != d.contents:
                    raise _conflict(d.id)
                a[1].append(r + 1)
                a[2].extend(d.routes)
        res = []
        for d, ranks, routes in order:
            s = 0.0
            for r in sorted(ranks, reverse=True):
                s += 1 / (rrf + float(r))
            res.append(d._with(s, tuple(sorted(set(routes)))))
        res.sort(key=lambda d: (-d.score, d._row, d.id))
        return res

    def rerank(query, docs, k=None):
        if not isinstance(query, str):
            raise SDKError("runtime_error", "rerank: query must be a string, got %s" % _tname(query))
        docs = _to_docs("rerank", "docs", docs)
        if k is None:
            k = len(docs)
        elif k < 1:
            raise SDKError("runtime_error", "rerank: k = %d must be ≥ 1" % k)
        elif k > MAX_WIDTH:
            raise BudgetExceeded("rerank: k = %d exceeds the cap of %d" % (k, MAX_WIDTH))
        if len(docs) > MAX_RERANK_DOCS:
            raise BudgetExceeded("rerank: %d documents exceed the cap of %d per call" % (len(docs), MAX_RERANK_DOCS))
        docs = _dedup(docs)
        scores = [rerank_score(query, d.contents) for d in docs]
        idx = sorted(range(len(docs)), key=lambda i: -scores[i])
        return [docs[i]._with(scores[i]) for i in idx[:k]]

    def doc(id):
        if not isinstance(id, str):
            raise SDKError("runtime_error", "doc: id must be a string, got %s" % _tname(id))
        d = st.seen.get(id)
        if d is None:
            raise SDKError("unknown_document", "doc: %s was not retrieved by this program" % go_quote(id))
        return d

    def print_(*args, sep=" ", end="\n"):
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        docs = _doc_args(args)
        if docs is not None:
            n = st.printed_docs
            text = "".join(
                "Doc %d(Title: %s) %s\n" % (n + i + 1, split_contents(d.contents)[1], d.text) for i, d in enumerate(docs)
            )
            st.emit(text, len(docs))
            return None
        st.emit(sep.join(str(a) for a in args) + end, 0)
        return None

    g = {
        "dense": dense,
        "sparse": sparse,
        "fuse": fuse,
        "dedup": dedup,
        "rerank": rerank,
        "doc": doc,
        "print": print_,
        "question": question,
        "Doc": Doc,
    }
    return g, st


def _program_line(tb):
    line = 0
    for fr in traceback.extract_tb(tb):
        if fr.filename == "program":
            line = fr.lineno
    return line


def run(src, question=DEFAULT_QUESTION):
    """Runs one program; returns its observation (printed text, then the error line on failure)."""
    g, st = make_sdk(question)
    try:
        code = compile(src, "program", "exec")
    except SyntaxError as e:
        return "Error (syntax_error): line %d: %s\n" % (e.lineno or 0, e.msg)
    try:
        exec(code, g)
    except (SDKError, BudgetExceeded) as e:
        st.out.append("Error (%s): line %d: %s\n" % (e.code, _program_line(e.__traceback__), e.msg))
    except Exception as e:  # noqa: BLE001 - every program error becomes the envelope
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        st.out.append("Error (runtime_error): line %d: %s\n" % (_program_line(e.__traceback__), last))
    return "".join(st.out)
