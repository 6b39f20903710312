"""The integrations driven the way current verl drives them (stand-ins in upstream.py), against a live server.

Every configuration of integrations/README.md: the reward loop (verl >= 0.7,
per-sample keyword calls, first-sample key list) with compute_score_async and
with compute_score; the batch manager (verl <= 0.6 or use_reward_loop=False,
per-key lists) with compute_score_batch; the legacy per-sample manager; the
tool under ToolAgentLoop (create / execute / release per call, verl's
response cut) with the RPL reward replayed from the response. Batches mix
kinds and hold refused samples.
"""

import json
import os
import unittest

from integrations import rewards
from integrations.client import PATH_EXECUTE, RequestError
from integrations.observation import DEFAULT_MAX_OBSERVATION_CHARS
from integrations.tests import upstream
from integrations.tests.support import FlakyProxy, questions, server
from integrations.tests.test_verl_tool import CONFIG_YAML, GOOD, QID, WEAK, load_tool

import yaml

PROMPT = ("Answer the given question. You can call retrieval_program. Give the answer inside <answer> and </answer>. "
          "Question: {q}\n")


def tool_call(code):
    return "<tool_call>\n" + json.dumps({"name": "retrieval_program", "arguments": {"code": code}}) + "\n</tool_call>"


def mixed_samples(q, n=12):
    """n samples cycling through qa (right, wrong), a refused qa (no gold answer), search-p1, rpl (extra_info
    turns) and proretrieval: every kind and a refusal in one batch."""
    out = []
    for i in range(n):
        r = i % 6
        if r == 0:
            out.append(upstream.Sample("searchR1_hotpotqa", "<answer>YG Entertainment</answer>",
                                       {"target": q["golden_answers"]}, {"question": q["question"]}))
        elif r == 1:
            out.append(upstream.Sample("searchR1_hotpotqa", "<answer>SM</answer>", {"target": q["golden_answers"]},
                                       {"question": q["question"]}))
        elif r == 2:
            out.append(upstream.Sample("searchR1_hotpotqa", "<answer>x</answer>", {"target": []}, {}))
        elif r == 3:
            out.append(upstream.Sample("p1", "<reasoning>r</reasoning><answer>YG Entertainment</answer>",
                                       {"target": q["golden_answers"]},
                                       {"reward_kind": "search-p1", "question": q["question"], "index": i}))
        elif r == 4:
            turn = {"printed_ids": q["gold_passage_ids"], "stats": {"retrieval_calls": 2, "candidates": 40}}
            out.append(upstream.Sample("rpl", "<answer>YG Entertainment</answer>",
                                       {"target": q["golden_answers"], "gold_ids": q["gold_passage_ids"]},
                                       {"reward_kind": "rpl", "turns": [turn]}))
        else:
            out.append(upstream.Sample("pro", '<answer>{"sql": "WHERE <text_0>", "retrieval_list": [{"type": "text", '
                                              '"field": "title", "query": "q"}]}</answer>', ["d1"],
                                       {"reward_kind": "proretrieval", "executed": True, "ranked": ["d2", "d1"]}))
    return out


class RewardConfigurationsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        cls.q = questions()[QID]

    def check_rows(self, scores, cols, n):
        self.assertEqual(len(scores), n)
        self.assertEqual(list(cols), list(rewards.keys()), "the key set of a per-sample kind choice: every kind's")
        for k, v in cols.items():
            self.assertEqual(v.shape, (n,), k)
        self.assertEqual(list(cols["score"]), scores)
        self.assertEqual([int(e) for e in cols["error"]], [1 if i % 6 == 2 else 0 for i in range(n)])
        self.assertEqual(scores[0], 1.0)
        self.assertEqual(scores[1], 0.0)
        self.assertEqual(cols["v_ret"][4], 1.0)
        self.assertEqual(cols["metrics_mrr"][5], 0.5)
        self.assertEqual(cols["outcome"][3], 1.0)

    def test_reward_loop_rejects_the_batch_manager(self):
        """What the README used to say fails on verl >= 0.7: the loop's registry has no "batch", and the loop calls
        the function per sample with keywords, which compute_score_batch cannot take."""
        with self.assertRaisesRegex(ValueError, "Unknown reward manager: batch"):
            upstream.RewardLoop({"reward_manager": "batch"}, rewards.compute_score_batch)
        loop = upstream.RewardLoop({"reward_manager": "naive", "reward_kwargs": {"url": self.srv.url}},
                                   rewards.compute_score_batch)
        with self.assertRaises(TypeError):
            loop.run(mixed_samples(self.q, 2))

    def test_reward_loop_async(self):
        """README config for verl >= 0.7: naive manager (default), name=compute_score_async."""
        with FlakyProxy(self.srv.url) as p:
            loop = upstream.RewardLoop({"reward_manager": "naive",
                                        "reward_kwargs": {"url": p.url, "on_error": "zero"}}, rewards.compute_score_async)
            scores, cols = loop.run(mixed_samples(self.q, 60))
            self.check_rows(scores, cols, 60)
            self.assertEqual(p.counts, {"/v1/rewards/qa": 11, "/v1/rewards/search-p1": 1, "/v1/rewards/rpl": 1,
                                        "/v1/rewards/proretrieval": 1},
                             "60 concurrent samples: one request per kind, the qa one sent again after each of its "
                             "10 refused samples (the server names the first bad rollout)")

    def test_reward_loop_plain_function(self):
        """The reward loop with a plain function: run in the loop's thread pool, calls gathered across threads."""
        with FlakyProxy(self.srv.url) as p:
            loop = upstream.RewardLoop({"reward_kwargs": {"url": p.url, "on_error": "zero"}}, rewards.compute_score)
            scores, cols = loop.run(mixed_samples(self.q, 60))
            self.check_rows(scores, cols, 60)
            self.assertLess(sum(p.counts.values()), 60, f"calls from the pool's threads share requests: {p.counts}")

    def test_reward_loop_raise_fails_only_the_refused(self):
        loop = upstream.RewardLoop({"reward_kwargs": {"url": self.srv.url}}, rewards.compute_score_async)
        with self.assertRaises(RequestError) as cm:
            loop.run(mixed_samples(self.q, 6))
        self.assertIn("no gold answer", cm.exception.message)

    def test_batch_manager(self):
        """README config for verl <= 0.6 (or use_reward_loop=False): reward_manager=batch, compute_score_batch."""
        with FlakyProxy(self.srv.url) as p:
            scores, cols = upstream.BatchRewardManager(rewards.compute_score_batch, url=p.url, on_error="zero")(
                mixed_samples(self.q, 60))
            self.check_rows(scores, cols, 60)
            self.assertEqual(p.counts["/v1/rewards/search-p1"], 1, "one request per kind for the batch")

    def test_legacy_naive_manager(self):
        scores, cols = upstream.NaiveRewardManager(rewards.compute_score, url=self.srv.url, on_error="zero")(
            mixed_samples(self.q, 12))
        self.check_rows(scores, cols, 12)

    def test_fixed_kind_keys(self):
        for kind in rewards.KIND_KEYS:
            with self.subTest(kind=kind):
                self.assertEqual(rewards.keys(kind=kind), rewards.KEYS + rewards.KIND_KEYS[kind])
        samples = [s for s in mixed_samples(self.q, 6) if s.data_source == "searchR1_hotpotqa"]
        scores, cols = upstream.BatchRewardManager(rewards.compute_score_qa_batch, url=self.srv.url, on_error="zero")(
            samples)
        self.assertEqual(list(cols), list(rewards.keys(kind="qa")))
        self.assertEqual(scores, [1.0, 0.0, 0.0])

    def test_server_fields_are_all_listed(self):
        """Every numeric field the server returns for a kind is in KIND_KEYS (a new field must be added there)."""
        q = self.q
        client = rewards.settings(url=self.srv.url).client()
        cases = {
            "qa": {"id": "a", "golden_answers": ["x"], "response": "<answer>x</answer>"},
            "rpl": {"id": "a", "golden_answers": ["x"], "gold_ids": q["gold_passage_ids"], "response": "<answer>x</answer>",
                    "turns": [{"printed_ids": q["gold_passage_ids"], "retrieval_calls": 1, "candidates": 3,
                               "printed_tokens": 10}]},
            "search-p1": {"id": "a", "question": "q", "golden_answers": ["x"],
                          "response": "<reasoning>r</reasoning><answer>x</answer>"},
            "proretrieval": {"id": "a", "ground_truth": ["d1"], "executed": True, "ranked": ["d1"],
                             "response": '<answer>{"sql": "WHERE <text_0>", "retrieval_list": [{"type": "text", '
                                         '"field": "title", "query": "q"}]}</answer>'},
            "retrieval": {"id": "a", "response": "<answer>who directed the informant</answer>",
                          "gold_ids": q["gold_passage_ids"], "k": 5},
        }
        for kind, rollout in cases.items():
            with self.subTest(kind=kind):
                flat = rewards._flatten(client.rewards(kind, [rollout])[0])
                self.assertLessEqual(set(flat), set(rewards.KIND_KEYS[kind]), "fields missing from KIND_KEYS")


class ToolLoopTest(unittest.TestCase):
    """The tool under verl's ToolAgentLoop, and the RPL reward replayed from what that loop produced."""

    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        cls.q = questions()[QID]
        with open(CONFIG_YAML, encoding="utf-8") as f:
            cls.yaml_cfg = yaml.safe_load(f)["tools"][0]["config"]

    def rollout(self, tool, max_len, programs=(GOOD, WEAK), tools_kwargs=None):
        loop = upstream.ToolAgentLoop([tool], max_tool_response_length=max_len)
        turns = [f"<think>look it up</think>\n{tool_call(p)}" for p in programs] + ["<answer>YG Entertainment</answer>"]
        messages = [{"role": "user", "content": PROMPT.format(q=self.q["question"])}]
        return loop, loop.run(messages, tools_kwargs or {}, turns)

    def test_per_call_instances_and_replayed_reward(self):
        tool = load_tool(self.srv.url)
        created, released, rewarded = [], [], []
        orig_create, orig_release, orig_calc = tool.create, tool.release, tool.calc_reward

        async def create(*a, **kw):
            iid, r = await orig_create(*a, **kw)
            created.append(iid)
            return iid, r

        async def release(iid, **kw):
            released.append(iid)
            return await orig_release(iid, **kw)

        async def calc(iid, **kw):
            rewarded.append(iid)
            return await orig_calc(iid, **kw)

        tool.create, tool.release, tool.calc_reward = create, release, calc
        # verl's Search-R1 data keeps the question under the "search" tool's create_kwargs, not ours
        tk = {"search": {"create_kwargs": {"question": self.q["question"]}}}
        loop, (sol, extra_fields, num_turns) = self.rollout(tool, self.yaml_cfg["max_observation_chars"], tools_kwargs=tk)
        self.assertEqual(len(created), 2, "one instance per call")
        self.assertEqual(released, created, "each released after its call")
        self.assertEqual(rewarded, [], "current verl never calls calc_reward")
        self.assertEqual(extra_fields["tool_rewards"], [0.0, 0.0])
        self.assertEqual([m["status"] for m in loop.metrics_seen], ["ok", "ok"])
        self.assertIn('<tool_response>\nDoc 1(Title: "', sol)
        self.assertEqual(tool._instance_dict, {})

        gt = {"target": self.q["golden_answers"]}
        extra = {"gold_ids": self.q["gold_passage_ids"], "question": self.q["question"]}
        sample = upstream.Sample("rpl", sol, gt, extra, tool_extra_fields=extra_fields, num_turns=num_turns)
        weak_only = upstream.Sample("rpl", self.rollout(load_tool(self.srv.url), 16384, programs=(WEAK,),
                                                        tools_kwargs=tk)[1][0], gt, extra)
        with FlakyProxy(self.srv.url) as p:
            loop = upstream.RewardLoop({"reward_kwargs": {"kind": "rpl", "url": p.url, "tool_config": CONFIG_YAML,
                                                          "score_key": "v_ret"}}, rewards.compute_score_async)
            scores, cols = loop.run([sample, weak_only])
            self.assertEqual(p.counts, {PATH_EXECUTE: 1, "/v1/rewards/rpl": 1}, "one execute and one reward request")
        self.assertEqual(list(cols), list(rewards.keys(kind="rpl")))
        self.assertEqual(scores, [1.0, 0.0], "V_ret: the GOOD program printed both gold passages; WEAK alone does not")
        self.assertEqual(list(cols["replayed"]), [2.0, 1.0])
        self.assertEqual(list(cols["replay_mismatch"]), [0.0, 0.0], "the replay shows the policy what it was shown")
        self.assertEqual(list(cols["retrieval_calls"]), [3.0, 1.0])
        self.assertEqual(list(cols["qa_em"]), [1.0, 1.0])

    def test_verl_default_cut_is_detected(self):
        """With verl's default max_tool_response_length (256) the observation arrives cut in the middle; the reward's
        replay notices (replay_mismatch), which is what the README's setting avoids."""
        _, (sol, _, _) = self.rollout(load_tool(self.srv.url), upstream.DEFAULT_MAX_TOOL_RESPONSE_LENGTH, programs=(GOOD,))
        self.assertIn("...(truncated)...", sol)
        d = rewards.compute_score("rpl", sol, {"target": self.q["golden_answers"]},
                                  {"gold_ids": self.q["gold_passage_ids"], "question": self.q["question"]},
                                  kind="rpl", url=self.srv.url, tool_config=CONFIG_YAML)
        self.assertEqual((d["replayed"], d["replay_mismatch"]), (1.0, 1.0))

    def test_2000_token_observation_arrives_whole(self):
        """A ~2,000-token observation (Qwen3 tokens, counted by the server's --policy-tokenizer) passes verl's cut
        whole with max_tool_response_length set to the tool's max_observation_chars, as the README says."""
        client = rewards.settings(url=self.srv.url).client()
        question = "Korean boy group formed by YG Entertainment"
        cands, _ = client.post("/retrieve", {"queries": [question], "topk": 50})
        ids_all = [d["id"] for d in cands["result"][0]]
        one = client.execute([{"code": f"docs = sparse(question, k=50)\nprint([d for d in docs if d.id == {i!r}])",
                               "question": question} for i in ids_all])[0]
        ids, total = [], 0  # passages chosen greedily up to ~2,000 tokens, printed in one call
        for i, r in zip(ids_all, one):
            t = r["stats"]["printed_tokens"]
            if total + t <= 1990 and len(ids) < 20:
                ids.append(i)
                total += t
        program = f"docs = sparse(question, k=50)\nkeep = [d for d in docs if d.id in {ids!r}]\nprint(keep)"
        res = client.execute([{"code": program, "question": question}])[0][0]
        self.assertEqual(res["code"], "ok", res.get("error"))
        self.assertGreaterEqual(res["stats"]["printed_tokens"], 1900, "a ~2,000-token observation")
        self.assertLessEqual(res["stats"]["printed_tokens"], 2048)

        chars = self.yaml_cfg["max_observation_chars"]
        self.assertEqual(chars, DEFAULT_MAX_OBSERVATION_CHARS)
        tk = {"retrieval_program": {"create_kwargs": {"question": question}}}
        loop = upstream.ToolAgentLoop([load_tool(self.srv.url)], max_tool_response_length=chars)
        sol, _, _ = loop.run([], tk, [tool_call(program), "<answer>x</answer>"])
        self.assertIn("<tool_response>\n" + res["observation"] + "\n</tool_response>", sol, "arrives whole")
        loop = upstream.ToolAgentLoop([load_tool(self.srv.url)])  # verl's default: 256 characters
        sol, _, _ = loop.run([], tk, [tool_call(program), "<answer>x</answer>"])
        self.assertNotIn(res["observation"], sol)

    def test_tool_budget_cuts_at_a_passage(self):
        """A budget below the observation: whole passages and a marker, and the reward credits only those."""
        tool = load_tool(self.srv.url, max_observation_chars=600)
        loop = upstream.ToolAgentLoop([tool], max_tool_response_length=600)
        tk = {"retrieval_program": {"create_kwargs": {"question": self.q["question"]}}}
        sol, _, _ = loop.run([], tk, [tool_call(GOOD), "<answer>YG Entertainment</answer>"])
        self.assertIn("more documents not shown: the observation is limited to 600 characters]", sol)
        self.assertNotIn("...(truncated)", sol, "verl's own cut never fires")
        self.assertEqual(loop.metrics_seen[0]["observation_cut"], 2)
        d = rewards.compute_score("rpl", sol, {"target": self.q["golden_answers"]},
                                  {"gold_ids": self.q["gold_passage_ids"], "question": self.q["question"]},
                                  kind="rpl", url=self.srv.url, max_observation_chars=600)
        self.assertEqual((d["replayed"], d["replay_mismatch"], d["observation_cut"], d["printed_docs"]),
                         (1.0, 0.0, 2.0, 1.0))
        self.assertEqual(d["v_ret"], 0.0, "one of the two gold passages was cut away")


if __name__ == "__main__":
    unittest.main()
