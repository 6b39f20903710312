"""Units without a server: program replay parsing, the observation budget, the micro-batchers."""

import asyncio
import json
import threading
import time
import unittest

import concurrent.futures
import os

from integrations import _util, microbatch
from integrations.microbatch import AsyncBatcher, ThreadBatcher
from integrations.observation import ObservationBudget


def call(code, name="retrieval_program"):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": {"code": code}}) + "\n</tool_call>"


def resp(text):
    return f"user\n<tool_response>\n{text}\n</tool_response>\nassistant\n"


class AnsweredProgramsTest(unittest.TestCase):
    def test_pairing(self):
        cases = [
            ("hermes, two turns", call("a") + resp("A") + call("b") + resp("B") + "<answer>x</answer>",
             [("a", "\nA\n"), ("b", "\nB\n")]),
            ("last call unanswered (length limit)", call("a") + resp("A") + call("b"), [("a", "\nA\n")]),
            ("max_parallel_calls=1: the second call of a turn never ran",
             call("a") + call("b") + resp("A") + call("c") + resp("C"), [("a", "\nA\n"), ("c", "\nC\n")]),
            ("other tool takes its own answer", call("q", name="search") + call("a") + resp("S") + resp("A"),
             [("a", "\nA\n")]),
            ("undecodable call is no call (verl skips it)", "<tool_call>{oops</tool_call>" + call("a") + resp("A"),
             [("a", "\nA\n")]),
            ("arguments as a JSON string", '<tool_call>{"name": "retrieval_program", "arguments": "{\\"code\\": \\"z\\"}"}'
             '</tool_call>' + resp("Z"), [("z", "\nZ\n")]),
            ("non-string code: answered by the tool's error, nothing to replay",
             '<tool_call>{"name": "retrieval_program", "arguments": {"code": 3}}</tool_call>' + resp("E") + call("a")
             + resp("A"), [("a", "\nA\n")]),
            ("Search-R1 <code> / <search>", "<search>q</search>\n\n<information>S</information>\n\n<code>\nprint(1)\n</code>"
             "\n\n<information>1</information>\n\n<answer>a</answer>", [("print(1)", "1")]),
            ("<code> inside a tool call is the call's", call("<code>x</code>") + resp("X"), [("<code>x</code>", "\nX\n")]),
            ("<code> inside an observation is evidence", "<code>a</code><information>see <code>b</code></information>",
             [("a", "see <code>b</code>")]),
            ("no observation tags at all: every program", call("a") + "ok" + call("b"), [("a", None), ("b", None)]),
            ("nothing", "<answer>x</answer>", []),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(_util.answered_programs(text), want)

    def test_question_from_prompt(self):
        prompt = ("system\nYou are a helpful assistant.\nuser\nAnswer the given question. ... For example, <answer> "
                  "Beijing </answer>. Question: who wrote the informant?\n\nassistant\n")
        self.assertEqual(_util.question_from_prompt(prompt), "who wrote the informant?")
        self.assertEqual(_util.question_from_prompt("Question: a\nQuestion:  b  \n"), "b", "the last one")
        self.assertEqual(_util.question_from_prompt("no question here"), "")

    def test_program_request(self):
        self.assertEqual(_util.program_request("print(1)", "q"), {"question": "q", "code": "print(1)"})
        self.assertEqual(_util.program_request("t <code>x</code>", "", {"max_calls": 2}, rid="7"),
                         {"question": "", "id": "7", "response": "t <code>x</code>", "budgets": {"max_calls": 2}})


def docs_text(n, body=100):
    return "".join(f"Doc {i}(Title: \"T{i}\") " + "w" * body + "\n" for i in range(1, n + 1))


class ObservationBudgetTest(unittest.TestCase):
    def test_fits_unchanged(self):
        text = docs_text(3)
        cut = ObservationBudget(max_chars=1000).cut(text, ["a", "b", "c"])
        self.assertEqual((cut.text, cut.printed_ids, cut.docs_cut, cut.cut), (text, ["a", "b", "c"], 0, False))

    def test_cut_at_passage_boundary(self):
        text = docs_text(10)  # 10 lines of ~118 characters
        for limit in (300, 500, 1000, 1180):
            with self.subTest(limit=limit):
                cut = ObservationBudget(max_chars=limit).cut(text, [str(i) for i in range(10)])
                self.assertLessEqual(len(cut.text), limit)
                kept = len(cut.printed_ids)
                self.assertTrue(cut.text.startswith(docs_text(kept)), "whole passages, in order")
                self.assertEqual(cut.docs_cut, 10 - kept)
                docs = "document" if 10 - kept == 1 else "documents"
                self.assertTrue(cut.text.endswith(f"[{10 - kept} more {docs} not shown: the observation is limited "
                                                  f"to {limit:,} characters]\n"), cut.text[-120:])
                self.assertGreater(kept, 0)
                self.assertLess(len(cut.text) + 118, limit + 118 + 80, "no room for one more passage")

    def test_preamble_and_error_line(self):
        text = "found:\n" + docs_text(3) + "Error (budget_exceeded): observation budget exceeded\n"
        cut = ObservationBudget(max_chars=300).cut(text, ["a", "b", "c"])
        self.assertTrue(cut.text.startswith("found:\nDoc 1("), "text before the first passage stays with it")
        self.assertEqual(cut.printed_ids, ["a"])

    def test_first_passage_too_long(self):
        text = "line one\n" + "x" * 5000
        cut = ObservationBudget(max_chars=200).cut(text, [])
        self.assertLessEqual(len(cut.text), 200)
        self.assertTrue(cut.text.startswith("line one\n["), cut.text)
        cut = ObservationBudget(max_chars=200).cut("y" * 5000, [])
        self.assertLessEqual(len(cut.text), 200)
        self.assertTrue(cut.text.startswith("yyy"))

    def test_token_budget(self):
        words = ObservationBudget(max_chars=None, max_tokens=100, tokenizer=lambda s: len(s.split()))
        text = "".join(f"Doc {i}(Title: \"T\") " + "w " * 30 + "\n" for i in range(1, 8))  # 33 words a passage
        cut = words.cut(text, list("abcdefg"))
        self.assertLessEqual(words.count_tokens(cut.text), 100)
        self.assertEqual(cut.printed_ids, ["a", "b"], "2 passages + marker fit in 100 words, 3 do not")
        self.assertIn("limited to 100 tokens", cut.text)

        class Enc:  # a transformers-like tokenizer
            def encode(self, text, add_special_tokens=True):
                return list(text)

        self.assertEqual(ObservationBudget(max_tokens=64, tokenizer=Enc()).count_tokens("abc"), 3)

    def test_bad_config(self):
        for kw in ({"max_chars": 10}, {"max_chars": "big"}, {"max_tokens": True, "tokenizer": len}, {"tokenizer": 3}):
            with self.subTest(kw=kw), self.assertRaises(ValueError):
                ObservationBudget(**kw)


class ThreadBatcherTest(unittest.TestCase):
    def test_concurrent_callers_share_batches(self):
        seen = []

        def run(key, items):
            seen.append(list(items))
            time.sleep(0.05)  # a request's round trip: the others arrive while the first batch is out
            return [x * 10 if x != 3 else ValueError("three") for x in items]

        b = ThreadBatcher(run, window_s=2.0)
        out, errs = {}, {}
        barrier = threading.Barrier(8)

        def worker(x):
            barrier.wait()
            try:
                out[x] = b.submit("k", x)
            except ValueError as e:
                errs[x] = str(e)

        threads = [threading.Thread(target=worker, args=(x,)) for x in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        self.assertEqual(out, {x: x * 10 for x in range(8) if x != 3})
        self.assertEqual(errs, {3: "three"}, "an item's exception goes to its caller only")
        self.assertLessEqual(len(seen), 2, f"8 concurrent callers in at most 2 batches, got {seen}")

    def test_lone_caller_is_not_delayed(self):
        b = ThreadBatcher(lambda k, items: items, window_s=30.0)
        done = []
        t = threading.Thread(target=lambda: done.append([b.submit("k", i) for i in range(5)]))
        t.start()
        t.join(5)  # a 30 s window would still be waiting
        self.assertEqual(done, [[0, 1, 2, 3, 4]], "a sequential caller must be sent at once")
        self.assertEqual(b.batches, 5)

    def test_pool_threads_that_finish_a_batch_go_out_together(self):
        """verl's reward loop with a plain function: 60 samples on a 5-thread pool whose threads drift apart.
        A thread back from a batch rejoins the next group before it is sent (at most window_s later), so the pool
        sends ~60 / 5 batches; before the fix the group went out as soon as a thread left, before it came back
        (16-27 batches here, 60 on a loaded CI machine)."""
        sizes = []

        def run(key, items):
            sizes.append(len(items))
            time.sleep(0.002)
            return list(items)

        b = ThreadBatcher(run, window_s=1.0)

        def call(i):
            time.sleep(0.001 * (i % 5))  # each sample's own work before its call: the threads drift apart
            return b.submit("k", i)

        with concurrent.futures.ThreadPoolExecutor(5) as pool:
            self.assertEqual(list(pool.map(call, range(60))), list(range(60)))
        self.assertEqual(sum(sizes), 60)
        self.assertLessEqual(len(sizes), 60 // 5 + 3, f"batch sizes {sizes}")

    def test_run_failure_reaches_every_caller(self):
        def run(key, items):
            raise RuntimeError("server down")

        b = ThreadBatcher(run)
        with self.assertRaisesRegex(RuntimeError, "server down"):
            b.submit("k", 1)


async def _one(b, x):
    return await b.submit("k", x)


class AsyncBatcherTest(unittest.TestCase):
    def test_gathered_and_split_at_max(self):
        sizes = []

        def run(key, items):
            sizes.append(len(items))
            return [(key, x) for x in items]

        async def go(b, n):
            return await asyncio.gather(*(b.submit("k" if x % 2 else "j", x) for x in range(n)))

        got = asyncio.run(go(AsyncBatcher(run, window_s=0.05), 100))
        self.assertEqual(got, [("k" if x % 2 else "j", x) for x in range(100)])
        self.assertEqual(sorted(sizes), [50, 50], "one batch per key")
        sizes.clear()
        asyncio.run(go(AsyncBatcher(run, window_s=0.05, max_batch=16), 64))
        self.assertEqual(sorted(sizes), [16, 16, 16, 16])

    def test_exceptions(self):
        def run(key, items):
            return [ValueError(x) if x % 3 == 0 else x for x in items]

        async def go():
            return await asyncio.gather(*(AsyncBatcher_.submit("k", x) for x in range(6)), return_exceptions=True)

        AsyncBatcher_ = AsyncBatcher(run)
        got = asyncio.run(go())
        self.assertEqual([type(g).__name__ if isinstance(g, Exception) else g for g in got],
                         ["ValueError", 1, 2, "ValueError", 4, 5])

    def test_pool_outlives_the_loop(self):
        # Batches of successive asyncio.run calls (one loop each, as verl's
        # stand-ins and scripts do) run on the same threads of the shared
        # pool, not on a default executor started again per loop.
        names = []

        def run(key, items):
            names.append(threading.current_thread().name)
            return items

        b = AsyncBatcher(run, window_s=0.001)

        async def go():
            return await asyncio.gather(*(b.submit("k", x) for x in range(4)))

        for _ in range(3):
            self.assertEqual(asyncio.run(go()), [0, 1, 2, 3])
        self.assertEqual(len(names), 3)
        self.assertTrue(all(n.startswith("rlsearch-microbatch") for n in names), names)
        self.assertIs(microbatch._shared_pool(), microbatch._shared_pool())

    def test_own_executor(self):
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mine") as ex:
            names = []
            b = AsyncBatcher(lambda key, items: names.append(threading.current_thread().name) or items,
                             window_s=0.001, executor=ex)
            self.assertEqual(asyncio.run(_one(b, 7)), 7)
            self.assertTrue(names[0].startswith("mine"), names)

    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_forked_child_gets_a_new_pool(self):
        parent = microbatch._shared_pool()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: a batch must run (the parent's threads do not exist here)
            try:
                ok = microbatch._pool is None and \
                    asyncio.run(_one(AsyncBatcher(lambda k, items: items, window_s=0.001), 1)) == 1 and \
                    microbatch._shared_pool() is not parent
                os.write(w, b"1" if ok else b"0")
            finally:
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        self.assertEqual(got, b"1")


if __name__ == "__main__":
    unittest.main()
