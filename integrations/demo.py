#!/usr/bin/env python3
"""Rollout text -> tool call -> observation -> reward, on the wiki_multihop corpus.

    python3 integrations/demo.py                              # builds a BM25 index under out/, serves it, runs
    python3 integrations/demo.py --url http://127.0.0.1:8000  # against a running `rlsearch serve`

A scripted policy turn (one <code> retrieval program) goes through the verl
tool (RetrievalProgramTool: create / execute / calc_reward / release) and
through the Search-R1 hook (execute_predictions with one <search> and one
<code> row); the final rollout text is scored with the QA, RPL and
Search-P1 rewards (integrations.rewards.compute_score_batch), each one
batched HTTP request, and the RPL reward once more replayed from the
rollout text alone (what current verl, which never calls calc_reward, uses).
"""

import argparse
import asyncio
import json
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from integrations import rewards, search_r1_hook  # noqa: E402
from integrations.localserver import REPO, LocalServer, data_dir  # noqa: E402
from integrations.verl_program_tool import RetrievalProgramTool  # noqa: E402

QUESTION_ID = "hotpotqa-5abd94525542992ac4f382d2"  # 2014 S/S ... formed by who? (gold: YG Entertainment)

PROGRAM = """docs = fuse(sparse(question, k=20), sparse("WINNER South Korean boy group", k=20))
print(docs[:3])"""


def load_question(qid):
    path = os.path.join(data_dir(), "wiki_multihop", "questions.jsonl")
    with open(path, encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q["id"] == qid:
                return q
    raise SystemExit(f"demo: question {qid} not in {path}")


class _Manager:
    """The smallest object Search-R1's methods need (config + batch_search)."""

    class config:  # noqa: N801 - attribute bag, as Search-R1's GenerationConfig
        search_url = None
        topk = 3

    def batch_search(self, queries):
        import requests

        r = requests.post(self.config.search_url, json={"queries": queries, "topk": self.config.topk,
                                                        "return_scores": True}, timeout=30).json()
        return ["".join(f"Doc {i + 1}(Title: {d['document']['contents'].split(chr(10))[0]}) "
                        f"{chr(10).join(d['document']['contents'].split(chr(10))[1:])}\n" for i, d in enumerate(res))
                for res in r["result"]]


def show(title, text, width=600):
    text = text if len(text) <= width else text[:width] + f"... [{len(text)} chars]"
    print(f"== {title}\n{text}\n")


async def run(url, qid):
    q = load_question(qid)
    tool = RetrievalProgramTool({"type": "native", "url": url}, None)
    prompt = f"Answer the question, retrieving evidence with <code> programs.\nQuestion: {q['question']}\n"
    turn1 = f"<think>I need the group behind 2014 S/S and who formed it.</think>\n<code>\n{PROGRAM}\n</code>"
    show("rollout text (policy turn 1)", prompt + turn1)

    iid, _ = await tool.create(create_kwargs={"question": q["question"], "ground_truth": {"target": q["golden_answers"]},
                                              "gold_ids": q["gold_passage_ids"]})
    call = {"name": tool.name, "arguments": {"code": PROGRAM}}
    show("tool call (verl function call)", json.dumps(call))
    resp, step_reward, metrics = await tool.execute(iid, call["arguments"])
    show("observation (ToolResponse.text)", resp.text)
    show("tool metrics", json.dumps(metrics))
    v_ret = await tool.calc_reward(iid)
    turns = tool._instance_dict[iid]["turns"]
    await tool.release(iid)

    answer = "<think>Doc 1 says 2014 S/S is by Winner, formed by YG Entertainment.</think>\n<answer>YG Entertainment</answer>"
    rollout = turn1 + "\n\n<information>" + resp.text.strip() + "</information>\n\n" + answer
    show("policy turn 2", answer)
    print(f"== calc_reward (V_ret of the printed evidence, gold {q['gold_passage_ids']}): {v_ret}\n")

    n = 3
    scores = {}
    for kind in ("qa", "rpl", "search-p1"):
        extra = {"question": q["question"], "gold_ids": q["gold_passage_ids"], "turns": turns, "index": q["id"]}
        scores[kind] = rewards.compute_score_batch(["wiki_multihop"] * n, [rollout, rollout.replace("YG", "SM"), ""],
                                                   [{"target": q["golden_answers"]}] * n, [extra] * n, kind=kind, url=url)
    # current verl never calls calc_reward: the RPL reward replays the response's programs instead
    replay = rewards.compute_score_batch(["wiki_multihop"], [rollout], [{"target": q["golden_answers"]}],
                                         [{"question": q["question"], "gold_ids": q["gold_passage_ids"]}],
                                         kind="rpl", url=url, score_key="v_ret")[0]
    for kind, s in scores.items():
        print(f"== reward {kind} (right answer / wrong answer / empty): "
              + " / ".join(f"{d['score']:.3f}" for d in s))
        keys = [k for k in ("em", "f1", "v_ret", "coverage", "qa_em", "total", "path", "outcome", "format") if k in s[0]]
        print("   components of the first: " + ", ".join(f"{k}={s[0][k]:.3f}" for k in keys))

    print(f"== reward rpl replayed from the rollout text (no turns given): V_ret={replay['score']:.0f}, "
          f"replayed={replay['replayed']:.0f} program(s), replay_mismatch={replay['replay_mismatch']:.0f}")

    search_r1_hook.install(_Manager)
    m = _Manager()
    m.config.search_url = url + "/retrieve"
    m.rlsearch_questions = ["", q["question"], ""]
    obs, dones, valid, is_search = m.execute_predictions(
        [f"<search>{q['question']}</search>", f"<code>{PROGRAM}</code>", "<answer>YG Entertainment</answer>"],
        "<pad>", [True, True, True])
    print()
    show("Search-R1 hook: <search> row observation", obs[0], 300)
    show("Search-R1 hook: <code> row observation", obs[1], 300)
    print(f"== Search-R1 hook: dones={dones} valid_action={valid} is_search={is_search}")
    return scores


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="running rlsearch server; default: build out/integrations-demo and serve it")
    ap.add_argument("--question-id", default=QUESTION_ID)
    args = ap.parse_args(argv)
    if args.url:
        asyncio.run(run(args.url, args.question_id))
        return 0
    ix = os.path.join(REPO, "out", "integrations-demo")
    with LocalServer(index_dir=ix) as srv:
        print(f"== serving {ix} on {srv.url}\n")
        asyncio.run(run(srv.url, args.question_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
