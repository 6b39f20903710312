"""HTTP client for an ``rlsearch serve`` backend, shared by every integration.

Retry policy (the same for every endpoint): connection errors, timeouts, 429
and 5xx are retried with exponential back-off, ``backoff * 2**i`` seconds
capped at ``max_backoff`` (a ``Retry-After`` in seconds, when the server sends
one on 429/503, is used instead, also capped), with up to ``jitter`` of it
added at random so that thousands of rollouts do not retry in lock step. The
server answers bad input with a 4xx and a JSON body ``{"error", "field"}``
(one policy for every endpoint, server/doc.go): a 4xx is never retried and raises
``RequestError`` naming the field. When the retries run out, ``UnavailableError``
says how many attempts were made and what the last one got.

Thread safety: a ``Client`` may be shared by threads (one ``requests.Session``
per thread). It pickles and deep-copies without its sessions (verl deep-copies
tools).
"""

import json
import random
import threading
import time
import urllib.parse

import requests

from integrations._util import stat  # noqa: F401  (re-exported: older callers import it from here)

# Paths of the endpoints this package calls (cmd/rlsearch, sdk, reward).
PATH_RETRIEVE = "/retrieve"
PATH_EXECUTE = "/v1/programs/execute"
PATH_MUTATE = "/v1/programs/mutate"
PATH_REWARDS = "/v1/rewards/"
PATH_HEALTH = "/healthz"

# Most programs / rollouts / items per request (sdk.DefaultMaxBatchPrograms,
# reward.DefaultMaxBatch): longer lists are sent in chunks.
MAX_BATCH = 4096

_ENDPOINT_SUFFIXES = (PATH_RETRIEVE, PATH_EXECUTE, PATH_MUTATE, "/rerank", PATH_HEALTH, "/v1/rewards/qa",
                      "/v1/rewards/rpl", "/v1/rewards/search-p1", "/v1/rewards/proretrieval", "/v1/rewards/retrieval")


class ServiceError(Exception):
    """Base class of the errors raised by Client."""


class RequestError(ServiceError):
    """The server refused the request (HTTP 4xx): bad input, not retried.

    status is the HTTP status, message the server's "error" text, field the
    JSON field it names ("" when none), path the endpoint.
    """

    def __init__(self, status, message, field="", path=""):
        self.status, self.message, self.field, self.path = status, message, field or "", path
        where = f" (field {self.field})" if self.field else ""
        super().__init__(f"rlsearch {path}: HTTP {status}: {message}{where}")


class UnavailableError(ServiceError):
    """The retries ran out: connection errors, timeouts, 429 or 5xx.

    attempts is the number of requests sent, status the last HTTP status
    (None when the last attempt got no response), cause the last error text.
    """

    def __init__(self, path, attempts, status, cause):
        self.path, self.attempts, self.status, self.cause = path, attempts, status, cause
        got = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"rlsearch {path}: unavailable after {attempts} attempts ({got}: {cause})")


def base_url(url):
    """Returns the server root of url: "http://h:p" from "http://h:p/",
    "http://h:p/retrieve", "http://h:p/v1/programs/execute" and the like (so a
    tool config may name any endpoint of the server, as verl's search tool
    config names /retrieve). Raises ValueError for a URL without scheme or host.
    """
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"rlsearch url must be a non-empty string, got {url!r}")
    u = urllib.parse.urlsplit(url.strip())
    if u.scheme not in ("http", "https") or not u.netloc:
        raise ValueError(f"rlsearch url {url!r} is not http(s)://host[:port][/path]")
    path = u.path.rstrip("/")
    for suf in _ENDPOINT_SUFFIXES:
        if path.endswith(suf):
            path = path[: -len(suf)]
            break
    return urllib.parse.urlunsplit((u.scheme, u.netloc, path, "", "")).rstrip("/")


class CallInfo:
    """What one Client.post took: attempts (requests sent), status (the final
    HTTP status) and seconds (wall time including back-off)."""

    __slots__ = ("attempts", "status", "seconds")

    def __init__(self, attempts=0, status=None, seconds=0.0):
        self.attempts, self.status, self.seconds = attempts, status, seconds

    def as_dict(self):
        return {"attempts": self.attempts, "status": self.status, "seconds": self.seconds}


class Client:
    """Client(url, timeout=30, max_retries=5, backoff=0.5, max_backoff=8, jitter=0.1).

    url: the server root or any of its endpoint URLs (see base_url).
    timeout: seconds per request (connect and read). max_retries: retries
    after the first attempt (0 = no retry). backoff, max_backoff: seconds,
    see the module doc. jitter: fraction of each delay added at random (0 in
    tests for exact timings). Values out of range raise ValueError naming
    the parameter.
    """

    def __init__(self, url, timeout=30.0, max_retries=5, backoff=0.5, max_backoff=8.0, jitter=0.1):
        self.url = base_url(url)
        for name, v in (("timeout", timeout), ("backoff", backoff), ("max_backoff", max_backoff), ("jitter", jitter)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise ValueError(f"rlsearch client: {name} must be a number >= 0, got {v!r}")
        if timeout == 0:
            raise ValueError("rlsearch client: timeout must be > 0")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"rlsearch client: max_retries must be an integer >= 0, got {max_retries!r}")
        self.timeout, self.max_retries = float(timeout), max_retries
        self.backoff, self.max_backoff, self.jitter = float(backoff), float(max_backoff), float(jitter)
        self._local = threading.local()
        self._sessions = []
        self._sessions_lock = threading.Lock()
        self._sleep = time.sleep

    def __getstate__(self):
        st = self.__dict__.copy()
        for k in ("_local", "_sleep", "_sessions", "_sessions_lock"):
            st.pop(k, None)
        return st

    def __setstate__(self, st):
        self.__dict__.update(st)
        self._local = threading.local()
        self._sessions = []
        self._sessions_lock = threading.Lock()
        self._sleep = time.sleep

    def _session(self):
        s = getattr(self._local, "session", None)
        if s is None:
            s = requests.Session()
            self._local.session = s
            with self._sessions_lock:
                self._sessions.append(s)
        return s

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to close
            pass

    def close(self):
        """Closes the connections of every thread's session; the client stays
        usable (new sessions are made on the next request)."""
        with self._sessions_lock:
            sessions, self._sessions = self._sessions, []
        self._local = threading.local()
        for s in sessions:
            s.close()

    def _delay(self, attempt, resp):
        d = min(self.max_backoff, self.backoff * (2 ** attempt))
        if resp is not None and resp.status_code in (429, 503):
            ra = resp.headers.get("Retry-After", "")
            try:
                d = min(self.max_backoff, max(0.0, float(ra)))
            except ValueError:
                pass
        return d + d * self.jitter * random.random()

    def post(self, path, payload):
        """POSTs payload (JSON) to path and returns (decoded JSON body, CallInfo).

        Raises RequestError on a 4xx, UnavailableError when the retries run
        out, ServiceError when a 2xx body is not JSON.
        """
        url = self.url + path
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        info = CallInfo()
        t0 = time.monotonic()
        status, cause = None, ""
        for attempt in range(self.max_retries + 1):
            resp = None
            info.attempts = attempt + 1
            try:
                resp = self._session().post(url, data=body, timeout=self.timeout,
                                            headers={"Content-Type": "application/json"})
            except (requests.ConnectionError, requests.Timeout) as e:
                status, cause = None, f"{type(e).__name__}: {e}"
            else:
                status = resp.status_code
                if 200 <= status < 300:
                    info.status, info.seconds = status, time.monotonic() - t0
                    try:
                        return resp.json(), info
                    except ValueError as e:
                        raise ServiceError(f"rlsearch {path}: HTTP {status} body is not JSON: {e}") from None
                msg, field = _error_of(resp)
                if 400 <= status < 500 and status != 429:
                    raise RequestError(status, msg, field, path)
                cause = msg
            if attempt < self.max_retries:
                self._sleep(self._delay(attempt, resp))
        raise UnavailableError(path, info.attempts, status, cause)

    # Endpoint helpers.

    def execute(self, programs, **options):
        """POST /v1/programs/execute. programs: list of {"id", "code" |
        "response", "question", "budgets"} (sdk.Request); options: "coalesce",
        "memo". Returns (results in order, CallInfo of the last chunk);
        chunks of MAX_BATCH."""
        out, info = [], CallInfo()
        for i in range(0, len(programs), MAX_BATCH):
            body = dict(options)
            body["programs"] = programs[i:i + MAX_BATCH]
            resp, info = self.post(PATH_EXECUTE, body)
            res = resp.get("results") if isinstance(resp, dict) else None
            if not isinstance(res, list) or len(res) != len(body["programs"]):
                raise ServiceError(f"rlsearch {PATH_EXECUTE}: want {len(body['programs'])} results, got {_short(resp)}")
            out.extend(res)
        return out, info

    def rewards(self, kind, rollouts, **options):
        """POST /v1/rewards/{kind}: the server's result dicts, in order.
        options: request fields besides rollouts (numeric_sign)."""
        if kind not in REWARD_KINDS:
            raise ValueError(f"rlsearch reward kind {kind!r} is not one of {', '.join(REWARD_KINDS)}")
        out = []
        for i in range(0, len(rollouts), MAX_BATCH):
            chunk = rollouts[i:i + MAX_BATCH]
            body = dict(options)
            body["rollouts"] = chunk
            resp, _ = self.post(PATH_REWARDS + kind, body)
            res = resp.get("rewards") if isinstance(resp, dict) else None
            if not isinstance(res, list) or len(res) != len(chunk):
                raise ServiceError(f"rlsearch /v1/rewards/{kind}: want {len(chunk)} rewards, got {_short(resp)}")
            out.extend(res)
        return out

    def mutate(self, trajectories=None, records=None, **options):
        """POST /v1/programs/mutate with trajectories (step 1: proposals) or
        records (step 2: D_mut records); options: executions, min_gold,
        max_verified. Returns the list of proposals or record results."""
        if (trajectories is None) == (records is None):
            raise ValueError("rlsearch mutate: give trajectories or records, not both")
        key_in, key_out = ("trajectories", "proposals") if trajectories is not None else ("records", "records")
        items = trajectories if trajectories is not None else records
        out = []
        for i in range(0, len(items), MAX_BATCH):
            chunk = items[i:i + MAX_BATCH]
            body = dict(options)
            body[key_in] = chunk
            resp, _ = self.post(PATH_MUTATE, body)
            res = resp.get(key_out) if isinstance(resp, dict) else None
            if not isinstance(res, list) or len(res) != len(chunk):
                raise ServiceError(f"rlsearch {PATH_MUTATE}: want {len(chunk)} {key_out}, got {_short(resp)}")
            out.extend(res)
        return out


REWARD_KINDS = ("qa", "rpl", "search-p1", "proretrieval", "retrieval")


def _error_of(resp):
    try:
        j = resp.json()
    except ValueError:
        return (resp.text or resp.reason or "").strip()[:500], ""
    if isinstance(j, dict):
        return str(j.get("error", j))[:500], str(j.get("field") or "")
    return str(j)[:500], ""


def _short(v):
    s = json.dumps(v)[:200] if not isinstance(v, str) else v[:200]
    return s
