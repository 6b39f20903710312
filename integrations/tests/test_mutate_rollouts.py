"""integrations/mutate_rollouts.py (rollout dumps -> D_mut records) against a live server."""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr

from integrations import mutate_rollouts
from integrations.client import PATH_MUTATE
from integrations.localserver import data_dir, free_port
from integrations.tests.support import FlakyProxy, questions, server

# sdk/verify_test.go: width 3 misses a gold passage that width 5 prints (Q1), width 10 at the second step (Q2).
Q1, Q2 = "hotpotqa-5abd94525542992ac4f382d2", "hotpotqa-5a87ab905542996e4f3088c1"


def program(q, k=3):
    return 'print(sparse("%s", k=%d))' % (q["question"].replace("\\", "\\\\").replace('"', '\\"'), k)


def write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")


class MutateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        qs = questions()
        cls.q1, cls.q2 = qs[Q1], qs[Q2]

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mutate-test-")
        self.addCleanup(lambda: __import__("shutil").rmtree(self.dir, ignore_errors=True))

    def path(self, name):
        return os.path.join(self.dir, name)

    def rollouts(self):
        q1, q2 = self.q1, self.q2
        ans1, ans2 = q1["golden_answers"][0], q2["golden_answers"][0]
        info = "\n\n<information>Doc 1(Title: x) y</information>\n\n"
        return [
            {"id": "traj", "question": q1["question"], "golden_answers": q1["golden_answers"],
             "gold_passage_ids": q1["gold_passage_ids"],
             "turns": [{"role": "prompt", "text": "Question: " + q1["question"] + "\n"},
                       {"role": "model", "text": "<think>t</think><code>\n" + program(q1) + "\n</code>"},
                       {"role": "observation", "text": info},
                       {"role": "model", "text": f"<answer>{ans1}</answer>"}]},
            {"id": "flat", "question": q2["question"], "golden_answers": q2["golden_answers"],
             "gold_ids": q2["gold_passage_ids"], "prompt": "Question: " + q2["question"] + "\n",
             "response": "<code>" + program(q2) + "</code>" + info + f"<answer>{ans2}</answer>"},
            {"id": "msgs", "extra_info": {"question": q1["question"], "gold_ids": q1["gold_passage_ids"]},
             "reward_model": {"ground_truth": {"target": q1["golden_answers"]}},
             "messages": [{"role": "user", "content": "Question: " + q1["question"]},
                          {"role": "assistant", "content": "<think>t</think>",
                           "tool_calls": [{"type": "function", "function": {
                               "name": "retrieval_program", "arguments": json.dumps({"code": program(q1)})}}]},
                          {"role": "tool", "content": "Doc 1(Title: x) y\n"},
                          {"role": "assistant", "content": "<answer>wrong answer</answer>"}]},
            {"input": "Answer this. Question: " + q2["question"] + "\nAssistant:",
             "output": "<code>" + program(q2) + "</code>" + info + f"<answer>{ans2}</answer>",
             "gts": {"target": q2["golden_answers"]}, "score": 1.0, "step": 3},
            {"id": "nocode", "question": q1["question"], "gold_ids": q1["gold_passage_ids"],
             "response": "<search>x</search>" + info + "<answer>y</answer>"},
        ]

    def run_main(self, *args):
        err = io.StringIO()
        with redirect_stderr(err):
            rc = mutate_rollouts.main(list(args))
        return rc, err.getvalue()

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    def test_records_from_every_input_shape(self):
        write(self.path("in.jsonl"), self.rollouts())
        gold = os.path.join(data_dir(), "wiki_multihop", "questions.jsonl")
        with FlakyProxy(self.srv.url) as p:
            rc, err = self.run_main("--url", p.url, "--in", self.path("in.jsonl"), "--out", self.path("out.jsonl"),
                                    "--gold", gold, "--batch", "2")
            self.assertEqual(rc, 0, err)
            self.assertEqual(p.counts[PATH_MUTATE], 3 + 2, "5 rollouts in batches of 2, then 4 records in batches of 2")
        summary = json.loads(err.strip().splitlines()[-1].split("mutate: ", 1)[1])
        self.assertEqual((summary["rollouts"], summary["verified"], summary["not_mutable"], summary["records"]),
                         (5, 4, 1, 4), err)
        self.assertIn("propose: 5/5", err)
        recs = self.read("out.jsonl")
        self.assertEqual([r["rollout_id"] for r in recs], ["traj", "flat", "msgs", "line-4"])
        widths = [r["record"]["program"]["width"] for r in recs]
        self.assertEqual(widths, [5, 10, 5, 10], "Q1 verifies at width 5, Q2 at width 10 (sdk/verify_test.go)")
        for r in recs:
            rec = r["record"]
            kinds = [s["kind"] for s in rec["spans"]]
            with self.subTest(rollout=r["rollout_id"]):
                self.assertIn("program", kinds)
                self.assertFalse(any(s["supervised"] for s in rec["spans"] if s["kind"] in ("prompt", "observation")))
                self.assertIn("k=%d" % rec["program"]["width"], rec["source"])
                self.assertIn("<code>\n" + rec["source"] + "</code>", rec["text"])
                self.assertTrue(rec["text"].endswith("</answer>"), rec["text"][-80:])
        by = {r["rollout_id"]: r["record"] for r in recs}
        self.assertTrue(by["traj"]["correct"])
        self.assertFalse(by["msgs"]["correct"], "the reused continuation's answer is wrong: its span is masked")
        ans = [s for s in by["msgs"]["spans"] if s["kind"] == "answer"]
        self.assertEqual([s["supervised"] for s in ans], [False])

    def test_proposals_then_continuations(self):
        write(self.path("in.jsonl"), self.rollouts()[:2])
        rc, err = self.run_main("--url", self.srv.url, "--in", self.path("in.jsonl"),
                                "--proposals-out", self.path("ctx.jsonl"), "--max-per-rollout", "2")
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.exists(self.path("out.jsonl")))
        ctx = self.read("ctx.jsonl")
        self.assertEqual([(c["rollout_id"], c["index"]) for c in ctx], [("traj", 0), ("flat", 0)],
                         "the default budget stops at the first verified mutation")
        for c in ctx:
            self.assertIn("<code>\n" + c["source"] + "</code>", c["context"])
            self.assertNotIn("wiki-", c["context"].split("</code>")[0], "contexts hold no gold id")
        conts = [dict(c, continuation="<think>evidence</think><answer>%s</answer>" % a)
                 for c, a in zip(ctx, [self.q1["golden_answers"][0], "nope"])]
        write(self.path("cont.jsonl"), conts)
        rc, err = self.run_main("--url", self.srv.url, "--in", self.path("in.jsonl"), "--continuations",
                                self.path("cont.jsonl"), "--out", self.path("out.jsonl"))
        self.assertEqual(rc, 0, err)
        recs = self.read("out.jsonl")
        self.assertEqual([(r["rollout_id"], r["record"]["correct"]) for r in recs], [("traj", True), ("flat", False)])
        self.assertTrue(recs[0]["record"]["text"].endswith(conts[0]["continuation"]))

    def test_unverifiable_continuation_program_is_reported(self):
        write(self.path("in.jsonl"), self.rollouts()[:1])
        bad = {"rollout_id": "traj", "program": {"queries": [self.q1["question"]], "mode": "sparse", "width": 3,
                                                  "rerank": 0, "print": 3}, "continuation": "<answer>x</answer>"}
        write(self.path("cont.jsonl"), [bad])
        rc, err = self.run_main("--url", self.srv.url, "--in", self.path("in.jsonl"), "--continuations",
                                self.path("cont.jsonl"), "--out", self.path("out.jsonl"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.read("out.jsonl"), [])
        self.assertIn('"record_errors": 1', err)

    def test_bad_input_names_the_line(self):
        write(self.path("in.jsonl"), [self.rollouts()[0], "{not json", ])
        rc, err = self.run_main("--url", self.srv.url, "--in", self.path("in.jsonl"), "--out", self.path("out.jsonl"))
        self.assertEqual(rc, 1)
        self.assertIn("in.jsonl:2: not JSON", err)
        r = dict(self.rollouts()[1])
        del r["gold_ids"]
        write(self.path("in.jsonl"), [r])
        rc, err = self.run_main("--url", self.srv.url, "--in", self.path("in.jsonl"), "--out", self.path("out.jsonl"))
        self.assertEqual(rc, 1)
        self.assertIn("line 1: no gold support ids", err)
        self.assertFalse(os.path.exists(self.path("out.jsonl")))

    def test_server_down_leaves_output_untouched(self):
        write(self.path("in.jsonl"), self.rollouts()[:1])
        write(self.path("out.jsonl"), ["old"])
        rc, err = self.run_main("--url", f"http://127.0.0.1:{free_port()}", "--max-retries", "1", "--in",
                                self.path("in.jsonl"), "--out", self.path("out.jsonl"))
        self.assertEqual(rc, 1)
        self.assertIn("unavailable after 2 attempts", err)
        with open(self.path("out.jsonl")) as f:
            self.assertEqual(f.read(), "old\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.jsonl", "out.jsonl"], "no temporary file left")

    def test_atomic_write_failure_leaves_no_temp(self):
        class Boom:
            def __iter__(self):
                yield {"a": 1}
                raise RuntimeError("boom")

        with self.assertRaises(RuntimeError):
            mutate_rollouts.write_jsonl_atomic(self.path("x.jsonl"), Boom())
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
