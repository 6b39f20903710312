"""Test support: one live `rlsearch serve` per test process, and a scripted proxy.

server() starts `rlsearch serve` on a free loopback port over a BM25 index of
the wiki_multihop corpus ($RLSEARCH_DATA, default ../shared/data), built
once into a temporary directory; it is stopped at exit. Observations are
counted in Qwen3 tokens (`--policy-tokenizer`, the tokenizer.json that
scripts/setup.sh fetches), so stats.printed_tokens is a real policy count.

FlakyProxy sits between a client and that server: each request first takes
the next entry of its script (an HTTP status answered with a JSON error
body, optionally with headers), and is proxied to the upstream once the
script is used up; `transform` may rewrite proxied JSON bodies. It counts
requests per path.
"""

import atexit
import json
import os
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from integrations.localserver import REPO, LocalServer, data_dir, free_port

QWEN3_TOKENIZER = os.path.join(REPO, ".cache", "tokenizers", "qwen3.json")

_server = None
_lock = threading.Lock()


def corpus_path():
    return os.path.join(data_dir(), "wiki_multihop", "corpus.jsonl")


def questions():
    """wiki_multihop questions by id."""
    out = {}
    with open(os.path.join(data_dir(), "wiki_multihop", "questions.jsonl"), encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            out[q["id"]] = q
    return out


def server():
    """The shared live server (started on first use); raises SkipTest only
    when the shared data folder is missing."""
    global _server
    with _lock:
        if _server is None:
            if not os.path.exists(corpus_path()):
                raise unittest.SkipTest(f"{corpus_path()} missing (set RLSEARCH_DATA)")
            args = []
            if os.path.exists(QWEN3_TOKENIZER):
                args = ["--policy-tokenizer", QWEN3_TOKENIZER]
            elif os.environ.get("RLSEARCH_REQUIRE_NATIVE") == "1":
                raise RuntimeError(f"{QWEN3_TOKENIZER} missing: run scripts/setup.sh")
            _server = LocalServer(args=args).start()
            atexit.register(_server.stop)
        return _server


class FlakyProxy:
    """FlakyProxy(upstream_url, script=[503, 503], transform=None, port=None).

    script entries: an int status, or (status, headers dict, body bytes|None).
    start() listens on 127.0.0.1 (port, else a free one); url is its root.
    """

    def __init__(self, upstream, script=(), transform=None, port=None):
        self.upstream, self.script, self.transform = upstream, list(script), transform
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.counts = {}
        self._lock = threading.Lock()
        self._httpd = None

    def total(self):
        with self._lock:
            return sum(self.counts.values())

    def start(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    proxy.counts[self.path] = proxy.counts.get(self.path, 0) + 1
                    step = proxy.script.pop(0) if proxy.script else None
                if step is not None:
                    status, headers, out = (step, {}, None) if isinstance(step, int) else step
                    if out is None:
                        out = json.dumps({"error": f"scripted {status}", "field": ""}).encode()
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                    return
                r = requests.post(proxy.upstream + self.path, data=body,
                                  headers={"Content-Type": "application/json"}, timeout=60)
                out = r.content
                if proxy.transform is not None and r.status_code == 200:
                    out = json.dumps(proxy.transform(self.path, json.loads(out))).encode()
                self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self):
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class RecordingSleep:
    """A stand-in for time.sleep that records the delays (no waiting) and may
    run a callback before the first one returns (e.g. start a server)."""

    def __init__(self, on_first=None):
        self.delays, self.on_first = [], on_first

    def __call__(self, d):
        self.delays.append(d)
        if self.on_first is not None and len(self.delays) == 1:
            self.on_first()
