"""Client-side micro-batching: concurrent per-sample calls become one request.

verl's reward loop (verl >= 0.7, ``reward_model.use_reward_loop=True``, the
default since 2025-12) calls the reward function once per sample, with
keyword arguments, many at once: a coroutine function is awaited on the
RewardLoopWorker's event loop (asyncio.gather over the batch,
verl/experimental/reward_loop/reward_loop.py), a plain function runs in that
loop's default thread pool (reward_manager/naive.py). One HTTP request per
sample would cost thousands of round trips per step; these batchers gather
what arrives together and run it as one call.

- ``AsyncBatcher.submit(key, item)`` (await the future it returns): items with the same key that
  arrive within ``window_s`` of the first (or until ``max_batch`` of them)
  run together, in one ``run(key, items)`` call on a thread pool that lives
  as long as the process (not the loop's default executor: verl's stand-ins
  and scripts that call ``asyncio.run`` per batch would start its threads
  again for every batch).
- ``ThreadBatcher.submit(key, item)`` (blocking, from any thread): the first
  caller of a group sends it as soon as every caller it expects has joined
  (those inside ``submit``, and other threads that left it less than
  ``window_s`` ago: a pool thread back from a batch brings its next item),
  when ``max_batch`` is reached, or after ``window_s``; a lone caller, or one
  thread calling in a loop (verl's sequential reward managers), is sent at
  once, never delayed.

``run(key, items)`` returns one outcome per item, in order: a result, or an
Exception instance, which is raised to that item's caller only (one refused
sample does not fail the others). An exception raised by ``run`` itself goes
to every caller of the batch. Both are safe for concurrent use.
"""

import asyncio
import concurrent.futures
import os
import threading
import time

# Seconds a batch waits for company after its first item ("per few
# milliseconds"), and most items per batch (the server's per-request limit,
# reward.DefaultMaxBatch and sdk.DefaultMaxBatchPrograms: 4,096).
DEFAULT_WINDOW_S = 0.005
DEFAULT_MAX_BATCH = 4096

# Threads of the shared pool that AsyncBatcher sends batches from: enough for
# the chunks of one reward-loop batch to be on the wire together (4,096
# samples in chunks of 1,024 in rewards.py) with room for a second loop.
POOL_THREADS = 8
_pool = None
_pool_lock = threading.Lock()


def _shared_pool():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = concurrent.futures.ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="rlsearch-microbatch")
    return _pool


def _forget_pool():  # a forked child has none of the parent's threads
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _deliver(outcomes, n):
    if not isinstance(outcomes, (list, tuple)) or len(outcomes) != n:
        got = len(outcomes) if isinstance(outcomes, (list, tuple)) else type(outcomes).__name__
        raise RuntimeError(f"rlsearch microbatch: run returned {got} outcomes for {n} items")
    return outcomes


class AsyncBatcher:
    """AsyncBatcher(run, window_s=0.005, max_batch=4096, executor=None); see
    the module doc. executor: a concurrent.futures executor for run (default:
    the module's shared pool of POOL_THREADS threads)."""

    def __init__(self, run, window_s=DEFAULT_WINDOW_S, max_batch=DEFAULT_MAX_BATCH, executor=None):
        self._run, self.window_s, self.max_batch = run, window_s, max_batch
        self._executor = executor
        self._groups = {}  # loop -> key -> ([item], [future])
        self._lock = threading.Lock()  # the groups of different event loops (one per thread) share the dict
        self.batches = 0  # batches run so far (a statistic for tests and logs)

    def submit(self, key, item):
        """Queues item under key; returns an asyncio future of its outcome
        (await it). Call from a coroutine of the running loop."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            groups = self._groups.get(loop)
            if groups is None:
                groups = self._groups[loop] = {}
            group = groups.get(key)
            first = group is None
            if first:
                group = groups[key] = ([], [])
            group[0].append(item)
            group[1].append(fut)
            full = len(group[0]) >= self.max_batch
            if full:
                del groups[key]
        if full:
            self._start(loop, key, group)
        elif first:
            loop.call_later(self.window_s, self._due, loop, key, group)
        return fut

    def _due(self, loop, key, group):
        with self._lock:
            groups = self._groups.get(loop)
            if groups is None or groups.get(key) is not group:
                return  # already sent when it filled up
            del groups[key]
        self._start(loop, key, group)

    def _start(self, loop, key, group):
        # Straight to the executor (not through a task): a batch that fills up
        # while more calls are still being queued is on the wire at once.
        self.batches += 1
        pool = self._executor if self._executor is not None else _shared_pool()
        loop.run_in_executor(pool, self._run, key, group[0]).add_done_callback(
            lambda done: self._deliver(group[1], done))

    @staticmethod
    def _deliver(futs, done):
        try:
            outcomes = _deliver(done.result(), len(futs))
        except Exception as e:  # noqa: BLE001 - handed to every caller of the batch
            outcomes = [e] * len(futs)
        for fut, out in zip(futs, outcomes):
            if fut.done():  # the caller was cancelled
                continue
            if isinstance(out, Exception):
                fut.set_exception(out)
            else:
                fut.set_result(out)


class _Group:
    __slots__ = ("items", "outcomes", "sent", "done")

    def __init__(self):
        self.items, self.outcomes, self.sent, self.done = [], None, False, threading.Event()


class ThreadBatcher:
    """ThreadBatcher(run, window_s=0.005, max_batch=4096); see the module doc."""

    def __init__(self, run, window_s=DEFAULT_WINDOW_S, max_batch=DEFAULT_MAX_BATCH):
        self._run, self.window_s, self.max_batch = run, window_s, max_batch
        self._cond = threading.Condition()
        self._open = {}  # key -> the _Group still taking items
        self._active = 0  # callers inside submit (in an open group, or waiting for a sent one)
        self._left = {}  # thread id -> time.monotonic() when that thread last left submit
        self.batches = 0

    def submit(self, key, item):
        with self._cond:
            self._active += 1
            self._left.pop(threading.get_ident(), None)
            try:
                group = self._open.get(key)
                leader = group is None
                if leader:
                    group = self._open[key] = _Group()
                idx = len(group.items)
                group.items.append(item)
                self._cond.notify_all()
                if leader:
                    self._cond.wait_for(lambda: self._ready(group), timeout=self.window_s)
                    if self._open.get(key) is group:
                        del self._open[key]
                    group.sent = True
                    self.batches += 1
            except BaseException:
                self._active -= 1
                raise
        try:
            if leader:
                try:
                    group.outcomes = _deliver(self._run(key, list(group.items)), len(group.items))
                except Exception as e:  # noqa: BLE001 - handed to every caller of the batch
                    group.outcomes = [e] * len(group.items)
                group.done.set()
            else:
                group.done.wait()
            out = group.outcomes[idx]
        finally:
            with self._cond:
                self._active -= 1
                self._left[threading.get_ident()] = time.monotonic()
                self._cond.notify_all()
        if isinstance(out, Exception):
            raise out
        return out

    def _ready(self, group):
        # Send when the group is full, or when every caller expected has
        # joined it: those inside submit, and the other threads that left it
        # less than window_s ago (a pool thread that finished a batch comes
        # back with its next item at once). A lone caller, or one thread
        # calling again and again (verl's sequential reward managers), is
        # sent at once; a pool whose threads finish a batch together goes out
        # together again, waiting at most window_s for a thread that left.
        n = len(group.items)
        if n >= self.max_batch:
            return True
        now = time.monotonic()
        for t in [t for t, at in self._left.items() if now - at >= self.window_s]:
            del self._left[t]
        return n >= self._active + len(self._left)
