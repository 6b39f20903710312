"""integrations.rewards (verl compute_score shapes) against a live `rlsearch serve`."""

import collections
import random
import re
import string
import unittest

from integrations import rewards
from integrations.client import PATH_EXECUTE, RequestError, UnavailableError
from integrations.tests.support import FlakyProxy, questions, server

QID = "hotpotqa-5abd94525542992ac4f382d2"
GOOD = 'docs = fuse(sparse(question, k=20), sparse("WINNER South Korean boy group", k=20))\nprint(docs[:3])'


# Search-R1's QA reward, written out from its definition (SQuAD normalisation,
# last <answer> block, EM / token F1 / substring) as the oracle.
def ref_normalize(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def ref_answer(sol):
    m = list(re.finditer(r"<answer>(.*?)</answer>", sol, re.DOTALL))
    return m[-1].group(1).strip() if m else None


def ref_f1(pred, gold):
    p, g = ref_normalize(pred).split(), ref_normalize(gold).split()
    same = sum((collections.Counter(p) & collections.Counter(g)).values())
    if same == 0:
        return 0.0
    pr, rc = same / len(p), same / len(g)
    return 2 * pr * rc / (pr + rc)


def ref_scores(sol, golds):
    a = ref_answer(sol)
    if a is None:
        return 0.0, 0.0, 0.0
    em = float(any(ref_normalize(a) == ref_normalize(g) for g in golds))
    f1 = max(ref_f1(a, g) for g in golds)
    sub = float(any(ref_normalize(g) in ref_normalize(a) for g in golds))
    return em, f1, sub


def batch(kind, sols, gts, extras=None, url=None, **kw):
    n = len(sols)
    return rewards.compute_score_batch(["wiki_multihop"] * n, sols, gts, extras if extras is not None else [None] * n,
                                       kind=kind, url=url, **kw)


class QATest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()

    def test_search_r1_em_differential(self):
        """Seeded random answers: the server's EM/F1/sub-EM equal Search-R1's definitions."""
        rng = random.Random(1)
        words = ["The", "a", "an", "Beatles", "YG", "Entertainment", "2009", "New", "York", "é", "Straße", "北京",
                 "the.", "(a)", "U.S.", "co-op", "don't", "An", "THE", "x_y"]
        puncts = ["", ".", ",", "!", "'", '"', "-", "...", " ", "  ", "\t", "\n"]

        def phrase():
            return "".join(rng.choice(words) + rng.choice(puncts) for _ in range(rng.randint(1, 5)))

        sols, gts = [], []
        while len(sols) < 300:
            golds = [phrase() for _ in range(rng.randint(1, 3))]
            if any(ref_normalize(g) == "" for g in golds):
                continue  # an empty normalised gold never matches on the server (reward/qa.go ExactMatch); Search-R1 lets it
            ans = rng.choice(golds) + rng.choice(["", " ", ".", " the"]) if rng.random() < 0.4 else phrase()
            wrap = rng.choice(["<answer>{}</answer>", "<think>x</think><answer> {} </answer>",
                               "<answer>no</answer> then <answer>{}</answer>", "{}"])
            sols.append(wrap.format(ans))
            gts.append({"target": golds})
        got = batch("qa", sols, gts, url=self.srv.url)
        matched = 0
        for sol, gt, g in zip(sols, gts, got):
            em, f1, sub = ref_scores(sol, gt["target"])
            with self.subTest(sol=sol, golds=gt["target"]):
                self.assertEqual(g["em"], em)
                self.assertAlmostEqual(g["f1"], f1, places=9)
                self.assertEqual(g["contains"], sub)
                self.assertEqual(g["score"], em)
            matched += em
        self.assertGreater(matched, 50, "the sample must hold matches, not only misses")

    def test_ground_truth_shapes_and_per_sample(self):
        sol = "<think>t</think><answer>YG Entertainment</answer>"
        for gt in ({"target": ["YG Entertainment"]}, ["SM", "YG Entertainment"], "yg entertainment",
                   ("YG Entertainment",), {"golden_answers": ["YG Entertainment"]}):
            with self.subTest(gt=gt):
                d = rewards.compute_score("searchR1_hotpotqa", sol, gt, None, url=self.srv.url)
                self.assertEqual(d["score"], 1.0)
        d = rewards.compute_score_qa("any", sol, {"target": ["YG"]}, {}, url=self.srv.url, score_key="f1")
        self.assertAlmostEqual(d["score"], 2 / 3)
        self.assertEqual(d["em"], 0.0)

    def test_answer_tag_flood(self):
        sol = "<answer>x</answer>" * 11
        self.assertEqual(batch("qa", [sol], [["x"]], url=self.srv.url)[0]["score"], 0.25)
        self.assertEqual(batch("qa", [sol], [["x"]], url=self.srv.url, answer_tag_limit=None)[0]["score"], 1.0)
        self.assertEqual(batch("qa", ["<answer>x</answer>" * 10], [["x"]], url=self.srv.url)[0]["score"], 1.0)

    def test_one_request_per_batch(self):
        with FlakyProxy(self.srv.url) as p:
            got = batch("qa", ["<answer>a%d</answer>" % i for i in range(50)], [["a%d" % (i % 2)] for i in range(50)],
                        url=p.url)
            self.assertEqual([g["score"] for g in got[:4]], [1.0, 1.0, 0.0, 0.0])
            self.assertEqual(p.counts, {"/v1/rewards/qa": 1})

    def test_empty_batch_and_empty_solution(self):
        self.assertEqual(batch("qa", [], [], url=self.srv.url), [])
        d = batch("qa", [""], [["x"]], url=self.srv.url)[0]
        self.assertEqual((d["score"], d["found"]), (0.0, 0.0))

    def test_bad_calls(self):
        with self.assertRaisesRegex(ValueError, "no reward kind for data_source 'other'"):
            rewards.compute_score("other", "x", ["y"], url=self.srv.url)
        with self.assertRaisesRegex(ValueError, "kind 'nope'"):
            rewards.compute_score("other", "x", ["y"], kind="nope", url=self.srv.url)
        with self.assertRaisesRegex(ValueError, "batch lengths differ"):
            rewards.compute_score_batch(["a"], ["x", "y"], [["y"]], None, kind="qa", url=self.srv.url)
        with self.assertRaisesRegex(KeyError, "no field 'nope'"):
            batch("qa", ["x"], [["y"]], url=self.srv.url, score_key="nope")

    def test_4xx_raises_or_zeroes_the_sample(self):
        with FlakyProxy(self.srv.url) as p:
            sols = ["<answer>p</answer>", "<answer>q</answer>", "<answer>r</answer>"]
            gts = [["p"], [], ["r"]]
            with self.assertRaises(RequestError) as cm:
                batch("qa", sols, gts, url=p.url)
            self.assertEqual((cm.exception.status, cm.exception.field), (400, "rollouts[1].golden_answers"))
            with self.assertLogs("integrations.rewards", "WARNING") as logs:
                got = batch("qa", sols, gts, url=p.url, on_error="zero")
            self.assertEqual([g["score"] for g in got], [1.0, 0.0, 1.0])
            self.assertEqual([g["error"] for g in got], [0.0, 1.0, 0.0])
            self.assertIn("no gold answer", "\n".join(logs.output))
            self.assertEqual(set(got[1]), set(got[0]), "a refused sample has the same keys as the others")
            self.assertEqual(p.counts["/v1/rewards/qa"], 3, "one refused request, then one without the bad rollout")

    def test_numeric_sign(self):
        """Search-R1's normalisation drops the minus sign (default, for parity); numeric_sign=strict keeps it."""
        sols, gts = ["<answer>5</answer>", "<answer>\u22125.0</answer>"], [["-5"], ["-5"]]
        self.assertEqual([g["score"] for g in batch("qa", sols, gts, url=self.srv.url)], [1.0, 0.0], "5 == -5, 5.0 != 5")
        self.assertEqual([g["score"] for g in batch("qa", sols, gts, url=self.srv.url, numeric_sign="strict")],
                         [0.0, 1.0])
        with self.assertRaisesRegex(ValueError, "numeric_sign"):
            batch("qa", sols, gts, url=self.srv.url, numeric_sign="loose")

    def test_5xx_retried(self):
        with FlakyProxy(self.srv.url, script=[503, 500]) as p:
            got = batch("qa", ["<answer>p</answer>"], [["p"]], url=p.url, backoff=0.01)
            self.assertEqual(got[0]["score"], 1.0)
            self.assertEqual(p.total(), 3)
        with FlakyProxy(self.srv.url, script=[500] * 3) as p:
            with self.assertRaises(UnavailableError):
                batch("qa", ["<answer>p</answer>"], [["p"]], url=p.url, backoff=0.01, max_retries=2)


class RPLTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        cls.q = questions()[QID]

    def sol(self, program, answer):
        return (f"<think>t</think>\n<code>\n{program}\n</code>\n\n<information>...</information>\n\n"
                f"<answer>{answer}</answer>")

    def test_programs_rerun_from_the_solution(self):
        q = self.q
        extra = {"question": q["question"], "gold_ids": q["gold_passage_ids"]}
        with FlakyProxy(self.srv.url) as p:
            got = batch("rpl", [self.sol(GOOD, "YG Entertainment"), self.sol("print(sparse(question, k=3))", "SM"),
                                "<answer>YG Entertainment</answer>"],
                        [{"target": q["golden_answers"]}] * 3, [extra] * 3, url=p.url)
            self.assertEqual(p.counts, {PATH_EXECUTE: 1, "/v1/rewards/rpl": 1}, "one execute and one reward request")
        self.assertEqual([(g["score"], g["v_ret"], g["retrieval_calls"]) for g in got],
                         [(1.0, 1.0, 2.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0)])
        self.assertEqual(got[0]["coverage"], 1.0)
        self.assertEqual(got[1]["coverage"], 0.5)
        v = batch("rpl", [self.sol(GOOD, "x")], [{"target": q["golden_answers"]}], [extra], url=self.srv.url,
                  score_key="v_ret")
        self.assertEqual(v[0]["score"], 1.0)

    def test_turns_from_extra_info_either_field_name(self):
        base = {"printed_ids": self.q["gold_passage_ids"], "candidates": 40, "observation": "..."}
        for t in ({**base, "retrieval_calls": 2}, {**base, "stats": {"calls": 2, "candidates": 40}},
                  {**base, "stats": {"retrieval_calls": 2, "candidates": 40}}):
            with self.subTest(turn=t):
                d = batch("rpl", ["<answer>YG Entertainment</answer>"], [{"target": self.q["golden_answers"],
                                                                          "gold_ids": self.q["gold_passage_ids"]}],
                          [{"turns": [t]}], url=self.srv.url)[0]
                self.assertEqual((d["v_ret"], d["retrieval_calls"], d["candidates"], d["score"]), (1.0, 2.0, 40.0, 1.0))


class SearchP1AndProRetrievalTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()

    def test_search_p1(self):
        q = questions()[QID]
        resp = ('<reasoning>Find the group, then its agency.</reasoning><tool_call>{"name": "search", "arguments": '
                '{"query": "2014 S/S debut album"}}</tool_call><answer>%s</answer>')
        got = batch("search-p1", [resp % "YG Entertainment", resp % "SM Town", "no tags"],
                    [{"target": q["golden_answers"]}] * 3,
                    [{"question": q["question"], "index": 7}] * 3, url=self.srv.url)
        self.assertEqual(got[0]["outcome"], 1.0)
        self.assertLess(got[1]["score"], got[0]["score"])
        self.assertLess(got[2]["score"], got[1]["score"])
        for g in got:
            self.assertAlmostEqual(g["score"], g["total"])
            self.assertTrue(0.0 <= g["score"] <= 1.0)

    def test_proretrieval(self):
        resp = ('<answer>{"sql": "WHERE <text_0>", "retrieval_list": [{"type": "text", "field": "title", '
                '"query": "q"}]}</answer>')
        got = batch("proretrieval", [resp, resp, "no program"], [["d1"], {"ground_truth": ["d1"]}, ["d1"]],
                    [{"executed": True, "ranked": ["d2", "d1"]}, {"executed": True, "ranked": ["d1"]},
                     {"exec_error": "not run"}], url=self.srv.url)
        self.assertEqual([g["metrics_mrr"] for g in got], [0.5, 1.0, 0.0])
        self.assertGreater(got[1]["score"], got[0]["score"])
        self.assertEqual(got[2]["format"], 0.0)

    def test_mixed_kinds_fixed_keys(self):
        q = questions()[QID]
        with FlakyProxy(self.srv.url) as p:
            got = rewards.compute_score_batch(
                ["searchR1_hotpotqa", "x"], ["<answer>YG Entertainment</answer>"] * 2,
                [{"target": q["golden_answers"]}] * 2, [{}, {"reward_kind": "search-p1", "question": q["question"]}],
                url=p.url)
            self.assertEqual(sorted(p.counts), ["/v1/rewards/qa", "/v1/rewards/search-p1"])
        self.assertEqual(list(got[0]), list(rewards.keys()), "every kind's keys, in one order")
        self.assertEqual(list(got[1]), list(rewards.keys()))
        self.assertEqual((got[0]["score"], got[0]["em"], got[0]["outcome"]), (1.0, 1.0, 0.0), "qa: no search-p1 parts")
        self.assertEqual((got[1]["outcome"], got[1]["em"]), (1.0, 0.0), "search-p1: no qa parts (its own are qa_*)")


class RetrievalRewardTest(unittest.TestCase):
    """kind retrieval: the answer is a query, rewarded by metric@k of what the served retriever returns for it."""

    @classmethod
    def setUpClass(cls):
        cls.srv = server()

    def test_metrics_against_retrieve(self):
        qs = list(questions().values())[:40]
        sols = [f"<answer>{q['question']}</answer>" for q in qs] + ["<answer>zzqxjv qqzzvx</answer>", "no answer"]
        gts = [q["gold_passage_ids"] for q in qs] + [qs[0]["gold_passage_ids"]] * 2
        with FlakyProxy(self.srv.url) as p:
            got = rewards.compute_score_retrieval_batch(["q"] * len(sols), sols, gts, None, url=p.url, retrieval_k=10)
            self.assertEqual(p.counts, {"/v1/rewards/retrieval": 1}, "one request for the batch")
        res, _ = rewards.settings(url=self.srv.url).client().post(
            "/retrieve", {"queries": [q["question"] for q in qs], "topk": 10})
        for q, g, hits in zip(qs, got, res["result"]):
            ids = [h["id"] for h in hits]
            gold = set(q["gold_passage_ids"])
            with self.subTest(q=q["id"]):
                self.assertAlmostEqual(g["recall"], len(gold & set(ids)) / len(gold))
                self.assertEqual(g["score"], g["recall"], "default metric: recall@k")
                self.assertEqual(g["k"], 10.0)
        self.assertEqual([g["score"] for g in got[-2:]], [0.0, 0.0], "no hits / no answer block: 0")
        self.assertEqual(list(got[0]), list(rewards.keys(kind="retrieval")))

    def test_metric_and_refusal(self):
        sols = ["<answer>who directed the informant</answer>"] * 2
        got = rewards.compute_score_retrieval_batch(["q", "q"], sols, [["wiki-014538"], []], None, url=self.srv.url,
                                                    retrieval_metric="mrr", retrieval_k=5, on_error="zero")
        self.assertEqual((got[0]["score"], got[0]["mrr"], got[0]["error"]), (1.0, 1.0, 0.0))
        self.assertEqual((got[1]["score"], got[1]["error"]), (0.0, 1.0), "no gold ids: refused, zeroed")
        with self.assertRaisesRegex(ValueError, "retrieval_metric"):
            rewards.compute_score_retrieval("q", "x", ["a"], url=self.srv.url, retrieval_metric="map")


if __name__ == "__main__":
    unittest.main()
