"""RetrievalProgramTool (verl BaseTool) against a live `rlsearch serve`."""

import asyncio
import copy
import inspect
import os
import unittest

import yaml

from integrations import verl_compat
from integrations.client import PATH_EXECUTE
from integrations.tests.support import FlakyProxy, RecordingSleep, questions, server
from integrations.verl_compat import VERL_SIGNATURES, OpenAIFunctionToolSchema, ToolResponse
from integrations.verl_program_tool import TOOL_NAME, RetrievalProgramTool

CONFIG_YAML = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "verl_program_tool_config.yaml")

# Gold passages wiki-016830 and wiki-007345; this program prints both (and the plain width-3 search does not).
QID = "hotpotqa-5abd94525542992ac4f382d2"
GOOD = 'docs = fuse(sparse(question, k=20), sparse("WINNER South Korean boy group", k=20))\nprint(docs[:3])'
WEAK = "print(sparse(question, k=3))"


def run(coro):
    return asyncio.run(coro)


def load_tool(url, **overrides):
    """Instantiates the tool as verl's initialize_tools_from_config does (YAML -> config dict + validated schema)."""
    with open(CONFIG_YAML, encoding="utf-8") as f:
        spec = yaml.safe_load(f)["tools"][0]
    cfg = dict(spec["config"], url=url, jitter=0.0, **overrides)
    tool = RetrievalProgramTool(config=cfg, tool_schema=OpenAIFunctionToolSchema.model_validate(spec["tool_schema"]))
    tool.client._sleep = RecordingSleep()
    _tools.append(tool)
    return tool


_tools = []


def tearDownModule():
    for t in _tools:
        t.client.close()


class SignatureTest(unittest.TestCase):
    def _norm(self, sig):
        return str(sig).replace("integrations.verl_compat.", "").replace("typing.", "")

    def test_stand_in_matches_verl(self):
        if verl_compat.HAVE_VERL:
            self.skipTest("verl installed: BaseTool is verl's own")
        for name, want in VERL_SIGNATURES.items():
            with self.subTest(name=name):
                self.assertEqual(self._norm(inspect.signature(getattr(verl_compat.BaseTool, name))), want)

    def test_tool_methods_match_verl(self):
        for name, want in VERL_SIGNATURES.items():
            with self.subTest(name=name):
                self.assertEqual(self._norm(inspect.signature(getattr(RetrievalProgramTool, name))), want)
                if name != "__init__":
                    self.assertTrue(inspect.iscoroutinefunction(getattr(RetrievalProgramTool, name)), f"{name} must be async")

    def test_yaml_is_verl_tool_config(self):
        with open(CONFIG_YAML, encoding="utf-8") as f:
            spec = yaml.safe_load(f)
        t = spec["tools"][0]
        self.assertEqual(t["class_name"], "integrations.verl_program_tool.RetrievalProgramTool")
        self.assertEqual(t["config"]["type"], "native", "verl's registry reads ToolType(config.type)")
        self.assertEqual(t["tool_schema"]["function"]["name"], TOOL_NAME)
        self.assertEqual(t["tool_schema"]["function"]["parameters"]["required"], ["code"])

    def test_default_schema_and_missing_url(self):
        tool = RetrievalProgramTool({"url": "http://127.0.0.1:1"}, None)
        self.assertEqual(tool.name, TOOL_NAME)
        with self.assertRaisesRegex(ValueError, "url"):
            RetrievalProgramTool({}, None)
        with self.assertRaisesRegex(ValueError, "budgets"):
            RetrievalProgramTool({"url": "http://127.0.0.1:1", "budgets": [1]}, None)


class LiveToolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()
        cls.q = questions()[QID]

    def create_kwargs(self):
        return {"question": self.q["question"], "ground_truth": {"target": self.q["golden_answers"]},
                "gold_ids": self.q["gold_passage_ids"]}

    def test_success_and_reward(self):
        tool = load_tool(self.srv.url)

        async def go():
            iid, created = await tool.create(create_kwargs=self.create_kwargs())
            self.assertIsInstance(created, ToolResponse)
            resp, step, m = await tool.execute(iid, {"code": GOOD}, agent_data=None)
            r1 = await tool.calc_reward(iid)
            # a second trajectory (older SGLang rollout: create kwargs flattened) printing only the BM25 top 3
            iid2, _ = await tool.create("fixed-id", **self.create_kwargs())
            self.assertEqual(iid2, "fixed-id")
            resp2, _, m2 = await tool.execute(iid2, {"code": WEAK})
            r2 = await tool.calc_reward(iid2)
            await tool.release(iid)
            await tool.release(iid2)
            return resp, step, m, r1, resp2, m2, r2

        resp, step, m, r1, resp2, m2, r2 = run(go())
        self.assertIsInstance(resp, ToolResponse)
        self.assertTrue(resp.text.startswith("Doc 1(Title: "), resp.text[:80])
        self.assertIn("YG Entertainment", resp.text)
        self.assertEqual(step, 0.0)
        self.assertEqual((m["status"], m["code"], m["retrieval_calls"], m["candidates"], m["printed_docs"], m["attempts"]),
                         ("ok", "ok", 2, 40, 3, 1))
        self.assertGreater(m["printed_tokens"], 0)
        self.assertEqual(r1, 1.0, "both gold passages printed: V_ret = 1")
        self.assertEqual(m2["retrieval_calls"], 1)
        self.assertEqual(r2, 0.0, "the BM25 top 3 misses a gold passage (sdk/verify_test.go)")
        self.assertEqual(tool._instance_dict, {}, "release drops the state")

    def test_code_in_tags_and_question_from_parameters(self):
        tool = load_tool(self.srv.url)

        async def go():
            iid, _ = await tool.create()
            return await tool.execute(iid, {"code": "<code>\nprint(sparse(question, k=1))\n</code>",
                                            "question": "who directed the informant"})

        resp, _, m = run(go())
        self.assertIn("The Informant!", resp.text)
        self.assertEqual(m["printed_docs"], 1)

    def test_program_error_is_the_observation(self):
        tool = load_tool(self.srv.url)
        resp, _, m = run(tool.execute("no-create", {"code": "import os\nprint(1)"}))
        self.assertTrue(resp.text.startswith("Error (unsupported_feature): line 1"), resp.text)
        self.assertEqual((m["status"], m["code"]), ("program_error", "unsupported_feature"))

    def test_empty_results(self):
        tool = load_tool(self.srv.url, empty_observation="(nothing found)")
        resp, _, m = run(tool.execute("x", {"code": 'print(sparse("zzqxjv qqzzvx", k=5))'}))
        self.assertEqual(resp.text, "(nothing found)")
        self.assertEqual((m["status"], m["printed_docs"], m["candidates"]), ("ok", 0, 0))
        self.assertEqual(run(tool.calc_reward("x")), 0.0, "no gold: no reward")

    def test_bad_arguments_make_no_request(self):
        with FlakyProxy(self.srv.url) as p:
            tool = load_tool(p.url)
            for params in ({}, {"code": ""}, {"code": 3}, None):
                with self.subTest(params=params):
                    resp, _, m = run(tool.execute("x", params))
                    self.assertTrue(resp.text.startswith("Error (bad_request): the tool call needs"), resp.text)
                    self.assertEqual(m["status"], "bad_request")
            self.assertEqual(p.total(), 0)

    def test_4xx_is_an_error_observation(self):
        with FlakyProxy(self.srv.url) as p:
            tool = load_tool(p.url, budgets={"max_steps": -1})
            resp, _, m = run(tool.execute("x", {"code": WEAK}))
            self.assertTrue(resp.text.startswith("Error (bad_request): "), resp.text)
            self.assertIn("(field programs[0].budgets.max_steps)", resp.text)
            self.assertEqual((m["status"], m["http_status"]), ("bad_request", 400))
            self.assertEqual(p.total(), 1, "no retry on 4xx")

    def test_5xx_retried_then_ok(self):
        with FlakyProxy(self.srv.url, script=[503, 502]) as p:
            tool = load_tool(p.url, backoff=0.5)
            resp, _, m = run(tool.execute("x", {"code": WEAK, "question": self.q["question"]}))
            self.assertEqual((m["status"], m["attempts"]), ("ok", 3))
            self.assertEqual(tool.client._sleep.delays, [0.5, 1.0])
            self.assertEqual(p.counts[PATH_EXECUTE], 3)
            self.assertTrue(resp.text.startswith("Doc 1"))

    def test_5xx_until_retries_run_out(self):
        with FlakyProxy(self.srv.url, script=[500] * 4) as p:
            tool = load_tool(p.url, max_retries=3)
            with self.assertLogs("integrations.verl_program_tool", "WARNING"):
                resp, _, m = run(tool.execute("x", {"code": WEAK}))
            self.assertEqual(resp.text, "Error (unavailable): the retrieval service did not answer after 4 attempts")
            self.assertEqual((m["status"], m["attempts"], m["http_status"]), ("unavailable", 4, 500))
            self.assertEqual(p.total(), 4)

    def test_renamed_stats_field(self):
        """A server that writes stats.retrieval_calls instead of stats.calls."""

        def rename(path, body):
            for r in body.get("results", []):
                r["stats"]["retrieval_calls"] = r["stats"].pop("calls")
            return body

        with FlakyProxy(self.srv.url, transform=rename) as p:
            tool = load_tool(p.url)

            async def go():
                iid, _ = await tool.create(create_kwargs=self.create_kwargs())
                _, _, m = await tool.execute(iid, {"code": GOOD})
                return m, await tool.calc_reward(iid)

            m, r = run(go())
            self.assertEqual(m["retrieval_calls"], 2)
            self.assertEqual(r, 1.0)

    def test_concurrent_trajectories(self):
        tool = load_tool(self.srv.url)
        qs = list(questions().values())[:16]

        async def one(q):
            iid, _ = await tool.create(create_kwargs={"question": q["question"], "gold_ids": q["gold_passage_ids"]})
            resp, _, m = await tool.execute(iid, {"code": "print(sparse(question, k=3))"})
            await tool.release(iid)
            return resp.text, m

        async def go():
            return await asyncio.gather(*(one(q) for q in qs))

        out = run(go())
        want = [tool.client.execute([{"code": "print(sparse(question, k=3))", "question": q["question"]}])[0][0]
                for q in qs]
        for (text, m), w in zip(out, want):
            self.assertEqual(text, w["observation"], "concurrent calls must not mix trajectories")
            self.assertEqual(m["printed_docs"], 3)

    def test_deepcopy_after_use(self):
        """verl's ToolListCache deep-copies the tool list."""
        tool = load_tool(self.srv.url)
        run(tool.execute("x", {"code": WEAK, "question": "q"}))
        t2 = copy.deepcopy(tool)
        _tools.append(t2)
        resp, _, m = run(t2.execute("y", {"code": WEAK, "question": "who directed the informant"}))
        self.assertEqual(m["status"], "ok")


if __name__ == "__main__":
    unittest.main()
