"""search_r1_hook on a stand-in of Search-R1's LLMGenerationManager, against a live server."""

import inspect
import re
import unittest
from typing import Any, List, Tuple

import requests

from integrations import search_r1_hook
from integrations.client import PATH_EXECUTE, PATH_RETRIEVE
from integrations.tests.frameworks import passages_title_text
from integrations.tests.support import FlakyProxy, server


class Tokenizer:
    """Identity tokenizer: "token ids" are the strings themselves."""

    pad_token = "<pad>"
    pad_token_id = 0

    def batch_decode(self, responses, skip_special_tokens=True):
        return list(responses)

    def __call__(self, texts, add_special_tokens=False, return_tensors=None, padding=None):
        return {"input_ids": list(texts)}


class Config:
    """search_r1.llm_agent.generation.GenerationConfig's fields the manager reads."""

    def __init__(self, search_url, topk=3, no_think_rl=False, **kw):
        self.search_url, self.topk, self.no_think_rl = search_url, topk, no_think_rl
        self.__dict__.update(kw)


class Actor:
    def __init__(self, turns):
        self.turns = turns


# Search-R1's prompt (scripts/data_process/nq_search.py make_prefix, template "base"), in Qwen's chat template as
# the trainer's initial_input_ids decode without special tokens.
PREFIX = ("Answer the given question. You must conduct reasoning inside <think> and </think> first every time you "
          "get new information. After reasoning, if you find you lack some knowledge, you can call a search engine by "
          "<search> query </search> and it will return the top searched results between <information> and "
          "</information>. You can search as many times as your want. If you find no further external knowledge "
          "needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. "
          "For example, <answer> Beijing </answer>. Question: {question}\n")


def prompt(question):
    return "system\nYou are a helpful assistant.\nuser\n" + PREFIX.format(question=question) + "\nassistant\n"


class StandInManager:
    """Search-R1's LLMGenerationManager (search_r1/llm_agent/generation.py at
    PeterGriffinJin/Search-R1 a14dc3a) reduced to the methods the hook touches,
    with the same signatures and the same behaviour (written here from the
    upstream definitions, no torch)."""

    def __init__(self, tokenizer, actor_rollout_wg, config, is_validation: bool = False):
        self.tokenizer, self.actor_rollout_wg, self.config, self.is_validation = tokenizer, actor_rollout_wg, config, is_validation

    def _batch_tokenize(self, responses: List[str]):
        return self.tokenizer(responses, add_special_tokens=False, return_tensors="pt", padding="longest")["input_ids"]

    def _postprocess_responses(self, responses):
        responses_str = self.tokenizer.batch_decode(responses, skip_special_tokens=True)
        responses_str = [r.split("</search>")[0] + "</search>" if "</search>" in r
                         else r.split("</answer>")[0] + "</answer>" if "</answer>" in r else r
                         for r in responses_str]
        if self.config.no_think_rl:
            raise ValueError("stop")
        return self._batch_tokenize(responses_str), responses_str

    def run_llm_loop(self, gen_batch, initial_input_ids):
        """run_llm_loop reduced to its calls: per turn, the actor's responses of the active rows are cut
        (_postprocess_responses) and executed (execute_predictions) with the active mask; the tensors are
        strings here. actor_rollout_wg.turns[t] holds the raw responses of turn t for every row."""
        active = [True] * len(initial_input_ids)
        observations = []
        for raw in self.actor_rollout_wg.turns:
            _, responses_str = self._postprocess_responses(raw)
            next_obs, dones, _, _ = self.execute_predictions(responses_str, self.tokenizer.pad_token, active)
            observations.append(next_obs)
            active = [a and not d for a, d in zip(active, dones)]
        return observations

    def execute_predictions(self, predictions: List[str], pad_token: str, active_mask=None, do_search=True) -> List[str]:
        cur_actions, contents = self.postprocess_predictions(predictions)
        next_obs, dones, valid_action, is_search = [], [], [], []
        search_queries = [c for a, c in zip(cur_actions, contents) if a == "search"]
        if do_search:
            search_results = self.batch_search(search_queries)
            assert len(search_results) == sum(1 for a in cur_actions if a == "search")
        else:
            search_results = [""] * sum(1 for a in cur_actions if a == "search")
        for action, active in zip(cur_actions, active_mask):
            if not active:
                next_obs.append(""); dones.append(1); valid_action.append(0); is_search.append(0)  # noqa: E702
            elif action == "answer":
                next_obs.append(""); dones.append(1); valid_action.append(1); is_search.append(0)  # noqa: E702
            elif action == "search":
                next_obs.append(f"\n\n<information>{search_results.pop(0).strip()}</information>\n\n")
                dones.append(0); valid_action.append(1); is_search.append(1)  # noqa: E702
            else:
                next_obs.append("\nMy previous action is invalid. If I want to search, I should put the query between "
                                "<search> and </search>. If I want to give the final answer, I should put the answer "
                                "between <answer> and </answer>. Let me try again.\n")
                dones.append(0); valid_action.append(0); is_search.append(0)  # noqa: E702
        assert len(search_results) == 0
        return next_obs, dones, valid_action, is_search

    def postprocess_predictions(self, predictions: List[Any]) -> Tuple[List[int], List[bool]]:
        actions, contents = [], []
        for prediction in predictions:
            if isinstance(prediction, str):
                match = re.search(r"<(search|answer)>(.*?)</\1>", prediction, re.DOTALL)
                if match:
                    content, action = match.group(2).strip(), match.group(1)
                else:
                    content, action = "", None
            else:
                raise ValueError(f"Invalid prediction type: {type(prediction)}")
            actions.append(action)
            contents.append(content)
        return actions, contents

    def batch_search(self, queries: List[str] = None) -> str:
        results = self._batch_search(queries)["result"]
        return [self._passages2string(result) for result in results]

    def _batch_search(self, queries):
        payload = {"queries": queries, "topk": self.config.topk, "return_scores": True}
        return requests.post(self.config.search_url, json=payload, timeout=30).json()

    def _passages2string(self, retrieval_result):
        return passages_title_text(retrieval_result)


def patched_class():
    return type("Patched", (StandInManager,), {})


PREDICTIONS = [
    "<think>t</think><search>who directed the informant</search>",
    "<think>t</think><answer>Steven Soderbergh</answer>",
    "no tags at all",
    "<search>2014 S/S debut album</search> and <answer>ignored</answer>",
    "",
]


class HookTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = server()

    def manager(self, cls, url=None, **cfg):
        return cls(Tokenizer(), None, Config((url or self.srv.url) + PATH_RETRIEVE, **cfg))

    def test_signatures_match(self):
        P = search_r1_hook.install(patched_class())
        for name in ("_postprocess_responses", "postprocess_predictions", "execute_predictions", "run_llm_loop"):
            orig = list(inspect.signature(getattr(StandInManager, name)).parameters.values())
            new = list(inspect.signature(getattr(P, name)).parameters.values())
            with self.subTest(name=name):
                self.assertEqual([(p.name, p.default) for p in orig], [(p.name, p.default) for p in new[:len(orig)]])
                self.assertTrue(all(p.kind == p.VAR_KEYWORD for p in new[len(orig):]), "only **kwargs may be added")

    def test_search_and_answer_unchanged(self):
        """Differential: without <code>, the patched manager answers exactly as Search-R1's."""
        P = search_r1_hook.install(patched_class())
        mask = [True, True, True, True, False]
        for do_search in (True, False):
            with self.subTest(do_search=do_search):
                want = self.manager(StandInManager).execute_predictions(PREDICTIONS, "<pad>", mask, do_search)
                got = self.manager(P).execute_predictions(PREDICTIONS, "<pad>", mask, do_search)
                self.assertEqual(got[1:], want[1:])
                self.assertEqual(got[0][:2], want[0][:2], "search and answer observations")
                self.assertEqual(got[0][3:], want[0][3:])
                self.assertIn("<code> and </code>", got[0][2], "the invalid-action hint names <code>")
        responses = ["<search>q</search> junk </search>", "<answer>a</answer> more", "plain"]
        self.assertEqual(self.manager(P)._postprocess_responses(responses),
                         self.manager(StandInManager)._postprocess_responses(responses))

    def test_code_rows_one_request_per_step(self):
        P = search_r1_hook.install(patched_class())
        with FlakyProxy(self.srv.url) as p:
            m = self.manager(P, url=p.url)
            m.rlsearch_questions = ["", "who directed the informant", "", "who wrote the informant"]
            preds = ["<search>who directed the informant</search>",
                     "<think>t</think><code>\nprint(sparse(question, k=2))\n</code>",
                     "<answer>x</answer>",
                     "<code>docs = sparse(question, k=5)\nprint(docs[:1])</code>"]
            obs, dones, valid, is_search = m.execute_predictions(preds, "<pad>", [True] * 4)
            self.assertEqual(p.counts, {PATH_RETRIEVE: 1, PATH_EXECUTE: 1})
        self.assertEqual((dones, valid, is_search), ([0, 0, 1, 0], [1, 1, 1, 1], [1, 1, 0, 1]))
        self.assertEqual(m.last_actions, ["search", "code", "answer", "code"])
        direct = search_r1_hook.Client(self.srv.url).execute(
            [{"code": "print(sparse(question, k=2))", "question": "who directed the informant"}])[0][0]
        self.assertEqual(obs[1], "\n\n<information>" + direct["observation"].strip() + "</information>\n\n")
        self.assertTrue(obs[1].startswith('\n\n<information>Doc 1(Title: "The Informant!")'))
        self.assertEqual(obs[3].count("Doc "), 1)
        self.assertEqual(obs[2], "")

    def test_program_error_empty_and_no_search(self):
        P = search_r1_hook.install(patched_class())
        m = self.manager(P)
        preds = ["<code>import os</code>", '<code>print(sparse("zzqxjv qqzzvx", k=3))</code>']
        obs, dones, _, _ = m.execute_predictions(preds, "<pad>", [True, True])
        self.assertTrue(obs[0].startswith("\n\n<information>Error (unsupported_feature): line 1"), obs[0])
        self.assertEqual(obs[1], "\n\n<information></information>\n\n", "nothing printed: an empty information block")
        self.assertEqual(dones, [0, 0])
        obs, _, _, _ = m.execute_predictions(preds, "<pad>", [True, True], do_search=False)
        self.assertEqual(obs, ["\n\n<information></information>\n\n"] * 2, "final rollout (do_search=False): no call")

    def test_4xx_and_5xx_become_observations(self):
        P = search_r1_hook.install(patched_class())
        with FlakyProxy(self.srv.url, script=[(400, {}, b'{"error": "bad thing", "field": "programs[0].code"}')]) as p:
            m = self.manager(P, url=p.url, program_max_retries=0)
            obs, _, valid, _ = m.execute_predictions(["<code>print(1)</code>"], "<pad>", [True])
            self.assertEqual(obs[0], "\n\n<information>Error (bad_request): bad thing (field programs[0].code)"
                                     "</information>\n\n")
            self.assertEqual(valid, [1])
        with FlakyProxy(self.srv.url, script=[503, 503]) as p:
            m = self.manager(P, url=p.url)
            m._rlsearch_client = search_r1_hook.Client(p.url, backoff=0.01, max_retries=2)
            obs, _, _, _ = m.execute_predictions(['<code>print("ok")</code>'], "<pad>", [True])
            self.assertEqual(obs[0], "\n\n<information>ok</information>\n\n", "retried after two 503s")
            self.assertEqual(p.counts[PATH_EXECUTE], 3)
        with FlakyProxy(self.srv.url, script=[500] * 3) as p:
            m = self.manager(P, url=p.url)
            m._rlsearch_client = search_r1_hook.Client(p.url, backoff=0.01, max_retries=2)
            obs, _, _, _ = m.execute_predictions(['<code>print("ok")</code>'] * 2, "<pad>", [True, True])
            self.assertEqual(obs, ["\n\n<information>Error (unavailable): the retrieval service did not answer after "
                                   "3 attempts</information>\n\n"] * 2)

    def test_cut_response(self):
        for give, want in [
            ("<code>x</code> rest <search>q</search>", "<code>x</code>"),
            ("<search>q</search> then <code>x</code>", "<search>q</search>"),
            ("<think>t</think><answer>a</answer> tail", "<think>t</think><answer>a</answer>"),
            ("<code>x</code><answer>a</answer>", "<code>x</code>"),
            ("no stop tag", "no stop tag"),
        ]:
            with self.subTest(give=give):
                self.assertEqual(search_r1_hook.cut_response(give), want)

    def test_postprocess_predictions(self):
        P = search_r1_hook.install(patched_class())
        actions, contents = self.manager(P).postprocess_predictions(
            ["<code>\n  x = 1\nprint(x)\n</code>", "<search> q </search><code>y</code>", "<answer> a </answer>", "none"])
        self.assertEqual(actions, ["code", "search", "answer", None])
        self.assertEqual(contents, ["  x = 1\nprint(x)", "q", "a", ""])
        with self.assertRaises(ValueError):
            self.manager(P).postprocess_predictions([3])

    def test_question_from_the_prompt(self):
        """A stock trainer: nothing sets rlsearch_questions; each row's program sees its own prompt's question."""
        P = search_r1_hook.install(patched_class())
        code = "<code>print(question)</code>"
        m = P(Tokenizer(), Actor([[code, "<search>q</search>", code], ["<answer>a</answer>"] * 3]),
              Config(self.srv.url + PATH_RETRIEVE))
        qs = ["who directed the informant?", "unused", "which canal is further north?"]
        obs = m.run_llm_loop(None, [prompt(q) for q in qs])
        self.assertEqual(obs[0][0], "\n\n<information>who directed the informant?</information>\n\n")
        self.assertEqual(obs[0][2], "\n\n<information>which canal is further north?</information>\n\n")
        m.rlsearch_questions = ["override", "", ""]
        obs = m.run_llm_loop(None, [prompt(q) for q in qs])
        self.assertEqual(obs[0][0], "\n\n<information>override</information>\n\n", "rlsearch_questions overrides")
        self.assertEqual(obs[0][2], "\n\n<information>which canal is further north?</information>\n\n")

    def test_program_passages_print_as_search_results(self):
        """The same passages through <search> (Search-R1's _passages2string) and <code> print the same text."""
        P = search_r1_hook.install(patched_class())
        m = self.manager(P)
        q = "who directed the informant"
        obs, _, _, _ = m.execute_predictions([f"<search>{q}</search>", f'<code>print(sparse("{q}", k=3))</code>'],
                                             "<pad>", [True, True])
        self.assertEqual(obs[0], obs[1])
        self.assertIn('Doc 1(Title: "The Informant!")', obs[1])

    def test_no_think_rl_as_upstream(self):
        P = search_r1_hook.install(patched_class())
        for cls in (StandInManager, P):
            with self.subTest(cls=cls.__name__), self.assertRaisesRegex(ValueError, "^stop$"):
                self.manager(cls, no_think_rl=True)._postprocess_responses(["<answer>a</answer>"])

    def test_install_uninstall(self):
        P = patched_class()
        search_r1_hook.install(P)
        search_r1_hook.install(P)  # idempotent
        self.assertIs(P.execute_predictions, search_r1_hook.execute_predictions)
        search_r1_hook.uninstall(P)
        self.assertIs(P.execute_predictions, StandInManager.execute_predictions)
        self.assertIs(P.run_llm_loop, StandInManager.run_llm_loop)
        self.assertNotIn("execute_predictions", P.__dict__)
        self.assertNotIn("run_llm_loop", P.__dict__)


if __name__ == "__main__":
    unittest.main()
