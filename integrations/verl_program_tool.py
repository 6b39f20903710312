"""A verl tool that runs the policy's retrieval program on rlsearch.

verl loads it from a tool config YAML (integrations/verl_program_tool_config.yaml):

    tools:
      - class_name: integrations.verl_program_tool.RetrievalProgramTool
        config: {type: native, url: "http://127.0.0.1:8000", timeout: 30, max_retries: 5}
        tool_schema: {type: function, function: {name: retrieval_program, ...}}

(the repository root must be on PYTHONPATH so that `integrations` imports).
Each call POSTs {"code", "question", "budgets"} to /v1/programs/execute and
returns the printed evidence as the observation (ToolResponse.text), step
reward 0.0, and metrics (retrieval calls, candidates, printed docs and
tokens, the program's result code, HTTP attempts and latency).

Failures never raise out of execute: a 4xx (bad request) becomes an
observation "Error (bad_request): <server message> (field <f>)"; connection
errors, timeouts, 429 and 5xx are retried with exponential back-off (see
integrations.client) and, when the retries run out, become "Error
(unavailable): ...". A failing program is the server's own observation
(printed text plus "Error (<code>): line N: ...").

Observation budget: the observation is cut at a passage boundary to the
tool's own budget (max_observation_chars, default 16,384 characters; with
tokenizer, also max_observation_tokens of the policy's tokenizer, default
2,048), with a marker line naming what was left out
(integrations.observation). verl cuts every tool response longer than
actor_rollout_ref.rollout.multi_turn.max_tool_response_length characters in
the middle (default 256!): set it to max_observation_chars (README).

Per-trajectory state (question, gold for calc_reward, the executed turns)
comes from create's kwargs: verl's ToolAgentLoop calls
create(create_kwargs=tools_kwargs[name]["create_kwargs"]); the older SGLang
rollout passes the same dict flattened. Keys read: question,
golden_answers / ground_truth, gold_ids / gold_passage_ids, gold_titles.
Without a question there, execute takes it from verl's agent_data (another
tool's create_kwargs, as verl's Search-R1 data keeps it under "search", else
the "Question: ..." line of the prompt's last user message).

Rewards: current verl's ToolAgentLoop creates, executes and releases an
instance for every single call and never calls calc_reward (it was called
by the SGLang rollout, removed in 2025-12), and it drops execute's metrics.
The RPL reward is then computed by integrations.rewards (kind rpl), which
replays the programs found in the response with this tool's settings
(reward_kwargs tool_config=<this YAML>); calc_reward stays for the old rollout.

Concurrency: one tool object serves many trajectories concurrently (asyncio);
the HTTP call runs in a worker thread (asyncio.to_thread).
"""

import asyncio
import logging
import os
from typing import Any, Optional
from uuid import uuid4

from integrations import _util
from integrations._util import stat
from integrations.client import Client, RequestError, ServiceError, UnavailableError
from integrations.observation import ObservationBudget
from integrations.verl_compat import BaseTool, OpenAIFunctionToolSchema, ToolResponse

logger = logging.getLogger(__name__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))

TOOL_NAME = "retrieval_program"

# The function schema the policy sees. The builtins and limits are the
# program runtime's (README "RPL programs", sdk/builtins.go).
DEFAULT_TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Run a short retrieval program (Python-like, Starlark dialect: no imports, classes or try) against the "
            "document index. Builtins: question (the task question), sparse(query, k=10) (BM25), dense(query, k=10) "
            "(E5), fuse(lists, k=60) (reciprocal rank fusion), dedup(docs), rerank(query, docs, k), doc(id), "
            "print(...). Only what the program prints is returned (at most 20 documents, 2,048 tokens); keep "
            "intermediate results in variables. Documents have .id .title .text .score."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The program source, e.g. docs = fuse(sparse(question, k=20), "
                                   "sparse(\"other query\", k=20)); print(docs[:3])",
                }
            },
            "required": ["code"],
        },
    },
}


class RetrievalProgramTool(BaseTool):
    """verl BaseTool for rlsearch retrieval programs.

    config keys (all optional except url): url (server root or any endpoint
    URL; alias retrieval_service_url), timeout (s, 30), max_retries (5),
    backoff (s, 0.5), max_backoff (s, 8), budgets (dict of sdk budgets sent
    with every program, e.g. {"max_calls": 4}), empty_observation (text
    returned when a program prints nothing, default "(the program printed
    nothing)"), max_observation_chars (16,384), max_observation_tokens
    (2,048, with tokenizer), tokenizer (the policy's: a tokenizer.json path or
    a Hugging Face model name / directory; see integrations.observation),
    reward_key (field of the RPL reward that calc_reward returns, dotted,
    default "v_ret"). A bad value raises ValueError naming the key.
    """

    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        config = dict(config or {})
        super().__init__(config, tool_schema)
        url = config.get("url") or config.get("retrieval_service_url")
        if not url:
            raise ValueError("RetrievalProgramTool config needs 'url' (the rlsearch server, e.g. http://127.0.0.1:8000)")
        self.client = Client(
            url,
            timeout=config.get("timeout", 30.0),
            max_retries=config.get("max_retries", 5),
            backoff=config.get("backoff", 0.5),
            max_backoff=config.get("max_backoff", 8.0),
            jitter=config.get("jitter", 0.1),
        )
        budgets = config.get("budgets")
        if budgets is not None and not isinstance(budgets, dict):
            raise ValueError(f"RetrievalProgramTool config 'budgets' must be a mapping, got {type(budgets).__name__}")
        self.budgets = dict(budgets) if budgets else None
        self.empty_observation = config.get("empty_observation", "(the program printed nothing)")
        self.budget = ObservationBudget.from_config(config)
        self.reward_key = config.get("reward_key", "v_ret")
        if not isinstance(self.reward_key, str) or not self.reward_key:
            raise ValueError("RetrievalProgramTool config 'reward_key' must be a non-empty string")
        self._instance_dict = {}

    def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
        schema = getattr(self, "tool_schema", None)
        return schema if schema is not None else OpenAIFunctionToolSchema.model_validate(DEFAULT_TOOL_SCHEMA)

    async def create(self, instance_id: Optional[str] = None, **kwargs) -> tuple[str, ToolResponse]:
        """Creates the per-trajectory state; returns (instance_id, empty ToolResponse)."""
        if instance_id is None:
            instance_id = str(uuid4())
        ck = dict(kwargs)
        nested = ck.pop("create_kwargs", None)
        if isinstance(nested, dict):
            ck.update(nested)
        gt = ck.get("ground_truth")
        answers = _util.first(ck, "golden_answers")
        if answers is None and gt is not None:
            answers = _util.first(gt, "target", "golden_answers") if isinstance(gt, dict) else gt
        self._instance_dict[instance_id] = {
            "question": str(ck.get("question") or ""),
            "golden_answers": _util.as_list(answers),
            "gold_ids": _util.as_list(_util.first(ck, "gold_ids", "gold_passage_ids")),
            "gold_titles": _util.as_list(ck.get("gold_titles")),
            "turns": [],
        }
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
        """Runs parameters["code"] (or a response holding a <code> block) and
        returns (ToolResponse(text=observation), 0.0, metrics)."""
        state = self._instance_dict.get(instance_id)
        if state is None:  # execute without create: keep going with an empty state
            await self.create(instance_id)
            state = self._instance_dict[instance_id]
        params = parameters if isinstance(parameters, dict) else {}
        code = params.get("code", params.get("program"))
        if not isinstance(code, str) or not code.strip():
            got = type(code).__name__ if code is not None else "nothing"
            msg = f"Error (bad_request): the tool call needs a non-empty string argument 'code' (got {got})"
            return ToolResponse(text=msg), 0.0, {"status": "bad_request", "error": msg, "attempts": 0}
        question = state["question"] or str(params.get("question") or "") or _agent_question(kwargs.get("agent_data"))
        # A policy may wrap the program in its <code> tags: the server extracts the last block.
        req = _util.program_request(code, question, self.budgets, rid=instance_id)
        try:
            results, info = await asyncio.to_thread(self.client.execute, [req])
        except RequestError as e:
            where = f" (field {e.field})" if e.field else ""
            msg = f"Error (bad_request): {e.message}{where}"
            return ToolResponse(text=msg), 0.0, {"status": "bad_request", "http_status": e.status, "error": e.message}
        except UnavailableError as e:
            msg = f"Error (unavailable): the retrieval service did not answer after {e.attempts} attempts"
            logger.warning("RetrievalProgramTool: %s", e)
            return ToolResponse(text=msg), 0.0, {"status": "unavailable", "http_status": e.status,
                                                 "attempts": e.attempts, "error": str(e)}
        except ServiceError as e:
            msg = f"Error (internal_error): {e}"
            return ToolResponse(text=msg), 0.0, {"status": "error", "error": str(e)}
        res = results[0]
        stats = res.get("stats") or {}
        cut = self.budget.cut(res.get("observation") or "", res.get("printed_ids") or [])
        obs = cut.text
        turn = _util.turn_from_result(res, program=code, printed_ids=cut.printed_ids, observation=obs)
        state["turns"].append(turn)
        metrics = {
            "status": "ok" if res.get("code") == "ok" else "program_error",
            "code": res.get("code"),
            "retrieval_calls": turn["retrieval_calls"],
            "candidates": turn["candidates"],
            "printed_docs": int(stat(stats, "printed_docs")),
            "printed_tokens": int(stat(stats, "printed_tokens")),
            "reranks": int(stat(stats, "reranks")),
            "steps": int(stat(stats, "steps")),
            "observation_cut": cut.docs_cut,
            "attempts": info.attempts,
            "latency_s": info.seconds,
        }
        return ToolResponse(text=obs if obs.strip() else self.empty_observation), 0.0, metrics

    async def calc_reward(self, instance_id: str, **kwargs) -> float:
        """The RPL reward's reward_key (default V_ret: the printed evidence of
        this trajectory's programs covers every gold passage) from
        /v1/rewards/rpl; 0.0 without gold or programs, or when the service
        fails (logged). kwargs may carry "response" (the final text, for the
        answer components)."""
        st = self._instance_dict.get(instance_id)
        if not st or not st["turns"] or not (st["gold_ids"] or st["gold_titles"]):
            return 0.0
        rollout = {"id": instance_id, "golden_answers": st["golden_answers"], "gold_ids": st["gold_ids"],
                   "gold_titles": st["gold_titles"], "turns": st["turns"]}
        if isinstance(kwargs.get("response"), str):
            rollout["response"] = kwargs["response"]
        try:
            res = await asyncio.to_thread(self.client.rewards, "rpl", [rollout])
            return float(_util.dotted(res[0], self.reward_key))
        except (ServiceError, KeyError, TypeError, ValueError) as e:
            logger.warning("RetrievalProgramTool.calc_reward: %s", e)
            return 0.0

    async def release(self, instance_id: str, **kwargs) -> None:
        self._instance_dict.pop(instance_id, None)


def _agent_question(agent_data):
    """The question of a verl AgentData (verl/experimental/agent_loop/
    tool_agent_loop.py): another tool's create_kwargs["question"] (verl's
    Search-R1 preprocessing puts it under "search"), else the "Question:"
    line of the last user message; "" without one."""
    if agent_data is None:
        return ""
    tk = getattr(agent_data, "tools_kwargs", None)
    if isinstance(tk, dict):
        for v in tk.values():
            q = _util.first((v or {}).get("create_kwargs") if isinstance(v, dict) else None, "question")
            if q:
                return str(q)
    for m in reversed(list(getattr(agent_data, "messages", None) or [])):
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            return _util.question_from_prompt(m["content"])
    return ""
