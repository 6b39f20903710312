"""Start a local `rlsearch serve` on loopback (tests and the demo).

    with LocalServer(corpus="../shared/data/wiki_multihop/corpus.jsonl", index_dir="out/ix") as srv:
        print(srv.url)

The binary is $RLSEARCH_BIN, else bin/rlsearch of the repository, built
with `go build` when missing. The index is built (BM25 only, `rlsearch index
--quiet`) when index_dir has no meta.json. The server listens on a free port
of 127.0.0.1; stop() sends SIGTERM (graceful shutdown), then SIGKILL after
10 s. Not safe for concurrent use.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import requests

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_dir():
    """$RLSEARCH_DATA, else ../shared/data next to the repository (house rule)."""
    return os.environ.get("RLSEARCH_DATA") or os.path.join(REPO, "..", "shared", "data")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary():
    """Path of the rlsearch binary, building bin/rlsearch when missing."""
    b = os.environ.get("RLSEARCH_BIN") or os.path.join(REPO, "bin", "rlsearch")
    if not os.path.exists(b):
        if not shutil.which("go"):
            raise RuntimeError(f"{b} does not exist and go is not on PATH to build it (make build)")
        subprocess.run(["go", "build", "-o", b, "./cmd/rlsearch"], cwd=REPO, check=True)
    return b


class LocalServer:
    """A `rlsearch serve` child process; see the module doc."""

    def __init__(self, corpus=None, index_dir=None, port=None, args=(), startup_s=60.0):
        self.corpus = corpus or os.path.join(data_dir(), "wiki_multihop", "corpus.jsonl")
        self._tmp = None
        if index_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="rlsearch-ix-")
            index_dir = os.path.join(self._tmp, "ix")
        self.index_dir, self.port, self.args, self.startup_s = index_dir, port, list(args), startup_s
        self.proc, self.log_path, self.url = None, None, None

    def build_index(self):
        if os.path.exists(os.path.join(self.index_dir, "meta.json")):
            return
        if not os.path.exists(self.corpus):
            raise RuntimeError(f"corpus {self.corpus} not found (set RLSEARCH_DATA to the shared data folder)")
        os.makedirs(os.path.dirname(os.path.abspath(self.index_dir)), exist_ok=True)
        subprocess.run([binary(), "index", "--corpus", self.corpus, "--out", self.index_dir, "--force", "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)

    def start(self):
        self.build_index()
        self.port = self.port or free_port()
        fd, self.log_path = tempfile.mkstemp(prefix="rlsearch-serve-", suffix=".log")
        with os.fdopen(fd, "w") as log:
            self.proc = subprocess.Popen([binary(), "serve", "--index", self.index_dir,
                                          "--addr", f"127.0.0.1:{self.port}", *self.args],
                                         stdout=log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rlsearch serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if requests.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"rlsearch serve did not answer /healthz within {self.startup_s} s:\n{self.log()}")

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-4000:]
        except (OSError, TypeError):
            return ""

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.log_path:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass
            self.log_path = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
