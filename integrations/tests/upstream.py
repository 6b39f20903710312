"""Stand-ins for the parts of verl that call our integrations, with upstream's semantics.

Each class mirrors one upstream file at verl commit b178a3cd5 (2026-01-29,
volcengine/verl; v0.7.0 + fixes), written here from its definitions without
torch, ray or transformers: what is mirrored is what the integrations depend
on (how the function or tool is called, with which arguments, what happens
to the result), not the tensors around it.

- RewardLoop: verl/experimental/reward_loop/reward_loop.py (RewardLoopWorker:
  compute_score_batch gathers one task per sample), reward_manager/registry.py
  (get_reward_manager_cls: names naive, dapo, rate_limited, remote; anything
  else "Unknown reward manager: <name>"), reward_manager/naive.py (run_single:
  extra_info updated with tool_extra_fields, num_turns and
  rollout_reward_scores; a coroutine function awaited with keyword arguments,
  a plain one run in the loop's default executor), verl/trainer/ppo/reward.py
  (get_custom_reward_fn: reward_kwargs merged over the call's kwargs) and
  verl/experimental/agent_loop/agent_loop.py (_postprocess: the key list of
  reward_extra_info is the first sample's, then np.array([info[key] for info
  in infos]) per key).
- BatchRewardManager: verl/workers/reward_manager/batch.py (verify: one call
  with data_sources, solution_strs, ground_truths, extra_infos and the
  reward_kwargs; __call__: one list per key, appended per sample), then
  verl/trainer/ppo/ray_trainer.py (non_tensor_batch.update({k: np.array(v)}))
  and verl/protocol.py DataProto.check_consistency (every non-tensor column
  has the batch size).
- NaiveRewardManager: verl/workers/reward_manager/naive.py (the legacy
  per-sample manager: one call per sample, in order, with keyword arguments).
- ToolAgentLoop: verl/experimental/agent_loop/tool_agent_loop.py
  (_handle_processing_tools_state: the first max_parallel_calls calls of a
  turn, gathered; tool rewards appended; the metrics of execute dropped;
  _call_tool: create(create_kwargs=tools_kwargs[name]["create_kwargs"]) ->
  execute(instance_id, args, agent_data=...) -> release in a finally, every
  call; an exception becomes "Error when executing tool: ..."; the response
  text cut to max_tool_response_length characters by
  tool_response_truncate_side, default "middle", rollout.yaml: 256),
  tool_parser.py (HermesToolParser: <tool_call>JSON</tool_call>, undecodable
  calls skipped), and the Qwen2.5 / Qwen3 chat template's rendering of tool
  messages as decoded with skip_special_tokens (what the reward function
  gets as solution_str).
"""

import asyncio
import functools
import inspect
import json
import re
from collections import defaultdict
from uuid import uuid4

import numpy as np

# reward_manager/registry.py: what verl/experimental/reward_loop/reward_manager/__init__.py registers.
REWARD_LOOP_MANAGERS = ("naive", "dapo", "rate_limited", "remote")

# rollout.yaml multi_turn defaults.
DEFAULT_MAX_TOOL_RESPONSE_LENGTH = 256
DEFAULT_TRUNCATE_SIDE = "middle"


def get_reward_manager_cls(name):
    """registry.get_reward_manager_cls for the reward loop's registry."""
    if name not in REWARD_LOOP_MANAGERS:
        raise ValueError(f"Unknown reward manager: {name}")
    return name


def get_custom_reward_fn(raw_fn, reward_kwargs):
    """verl/trainer/ppo/reward.py get_custom_reward_fn: reward_kwargs take
    precedence over the call's kwargs; a coroutine function stays one."""
    if not inspect.iscoroutinefunction(raw_fn):
        def call(*args, **kwargs):
            return raw_fn(*args, **{**kwargs, **reward_kwargs})

        return functools.partial(call)

    async def acall(*args, **kwargs):
        return await raw_fn(*args, **{**kwargs, **reward_kwargs})

    return functools.partial(acall)


class Sample:
    """One rollout as the reward code sees it: data_source, the decoded
    response (solution_str), reward_model.ground_truth, extra_info, and what
    the agent loop adds (tool_extra_fields, __num_turns__)."""

    def __init__(self, data_source, solution_str, ground_truth, extra_info=None, tool_extra_fields=None, num_turns=1):
        self.data_source, self.solution_str, self.ground_truth = data_source, solution_str, ground_truth
        self.extra_info = dict(extra_info or {})
        self.tool_extra_fields = tool_extra_fields
        self.num_turns = num_turns


class RewardLoop:
    """RewardLoop(config, compute_score): the reward loop of verl >= 0.7.

    config: {"reward_manager": str, "reward_kwargs": dict} (the keys
    reward_model.reward_manager and custom_reward_function.reward_kwargs).
    Building it with a manager the loop's registry lacks raises as verl does.
    """

    def __init__(self, config, compute_score):
        get_reward_manager_cls(config.get("reward_manager", "naive"))
        self.compute_score = get_custom_reward_fn(compute_score, dict(config.get("reward_kwargs") or {}))
        self.is_async = inspect.iscoroutinefunction(self.compute_score)

    async def run_single(self, s):
        loop = asyncio.get_running_loop()
        extra_info = dict(s.extra_info)
        if s.tool_extra_fields is not None:
            extra_info.update(s.tool_extra_fields.items())
        extra_info["num_turns"] = s.num_turns
        extra_info["rollout_reward_scores"] = {}
        kw = dict(data_source=s.data_source, solution_str=s.solution_str, ground_truth=s.ground_truth,
                  extra_info=extra_info)
        if self.is_async:
            result = await self.compute_score(**kw)
        else:
            result = await loop.run_in_executor(None, lambda: self.compute_score(**kw))
        reward_extra_info = {}
        if isinstance(result, dict):
            score = result["score"]
            for key, value in result.items():
                reward_extra_info[key] = value
        else:
            score = result
            reward_extra_info["acc"] = score
        return {"reward_score": score, "reward_extra_info": reward_extra_info}

    async def compute_score_batch(self, samples):
        return await asyncio.gather(*(asyncio.create_task(self.run_single(s)) for s in samples))

    def run(self, samples):
        """Scores samples as one agent-loop batch and returns (scores,
        non_tensor_batch) as AgentLoopWorker._postprocess builds them."""
        outputs = asyncio.run(self.compute_score_batch(samples))
        infos = [o["reward_extra_info"] for o in outputs]
        reward_extra_keys = list(infos[0].keys())
        non_tensor_batch = {}
        for key in reward_extra_keys:
            non_tensor_batch[key] = np.array([info[key] for info in infos])
        return [o["reward_score"] for o in outputs], non_tensor_batch


def check_consistency(non_tensor_batch, batch_size):
    """verl/protocol.py DataProto.check_consistency on the non-tensor batch."""
    for key, val in non_tensor_batch.items():
        assert isinstance(val, np.ndarray), f"data in the non_tensor_batch must be a numpy.array, {key=}"
        assert val.shape[0] == batch_size, f"key {key} length {len(val)} is not equal to batch size {batch_size}"


class BatchRewardManager:
    """verl/workers/reward_manager/batch.py with ray_trainer's use of its result."""

    def __init__(self, compute_score, **reward_kwargs):
        self.compute_score, self.reward_kwargs = compute_score, reward_kwargs

    def __call__(self, samples):
        extras = [dict(s.extra_info) for s in samples]
        for e in extras:
            e["rollout_reward_scores"] = {}
        scores = self.compute_score(data_sources=np.array([s.data_source for s in samples], dtype=object),
                                    solution_strs=[s.solution_str for s in samples],
                                    ground_truths=[s.ground_truth for s in samples], extra_infos=extras,
                                    **self.reward_kwargs)
        return reward_columns(scores, len(samples))


def reward_columns(scores, n):
    """Both managers' __call__ tail: each score (a float, or a dict with "score"
    and extra keys) gives its reward and appends to one list per key; the
    lists become the batch's non-tensor columns (ray_trainer.py), which must
    hold n rows each (check_consistency)."""
    reward_extra_info = defaultdict(list)
    rewards = []
    for score in scores:
        if isinstance(score, dict):
            rewards.append(score["score"])
            for key, value in score.items():
                reward_extra_info[key].append(value)
        else:
            rewards.append(score)
    non_tensor_batch = {k: np.array(v) for k, v in reward_extra_info.items()}
    check_consistency(non_tensor_batch, n)
    return rewards, non_tensor_batch


class NaiveRewardManager:
    """verl/workers/reward_manager/naive.py: one call per sample, in order."""

    def __init__(self, compute_score, **reward_kwargs):
        self.compute_score = get_custom_reward_fn(compute_score, reward_kwargs)

    def __call__(self, samples):
        scores = []
        for s in samples:
            extra_info = dict(s.extra_info)
            extra_info["num_turns"] = s.num_turns
            extra_info["rollout_reward_scores"] = {}
            scores.append(self.compute_score(data_source=s.data_source, solution_str=s.solution_str,
                                             ground_truth=s.ground_truth, extra_info=extra_info))
        return reward_columns(scores, len(samples))


_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def hermes_tool_calls(text):
    """HermesToolParser.extract_tool_calls: [(name, arguments JSON string)]."""
    if "<tool_call>" not in text or "</tool_call>" not in text:
        return []
    calls = []
    for match in _TOOL_CALL.findall(text):
        try:
            fc = json.loads(match)
            calls.append((fc["name"], json.dumps(fc["arguments"], ensure_ascii=False)))
        except Exception:  # noqa: BLE001 - verl logs "Failed to decode tool call" and goes on
            pass
    return calls


def render_tool_messages(texts):
    """A turn of tool messages as the Qwen2.5 / Qwen3 chat template renders it,
    decoded with skip_special_tokens (<|im_start|>, <|im_end|> dropped), with
    the next assistant turn's generation prompt."""
    return "user" + "".join(f"\n<tool_response>\n{t}\n</tool_response>" for t in texts) + "\nassistant\n"


class AgentData:
    """tool_agent_loop.AgentData: the fields a tool may read."""

    def __init__(self, messages, tools_kwargs):
        self.messages, self.tools_kwargs = messages, tools_kwargs
        self.request_id = uuid4().hex
        self.metrics, self.extra_fields, self.tool_rewards = {}, {}, []


class ToolAgentLoop:
    """ToolAgentLoop(tools, max_tool_response_length=256, truncate_side="middle", max_parallel_calls=1).

    run(messages, tools_kwargs, assistant_turns) plays a scripted policy:
    each assistant turn's text is "generated", its hermes tool calls run as
    upstream runs them, and the tool responses are appended as the chat
    template renders them. Returns (solution_str, extra_fields, num_turns)
    as the reward loop receives them (extra_fields: turn_scores and
    tool_rewards, tool_agent_loop.run's output)."""

    def __init__(self, tools, max_tool_response_length=DEFAULT_MAX_TOOL_RESPONSE_LENGTH,
                 truncate_side=DEFAULT_TRUNCATE_SIDE, max_parallel_calls=1):
        self.tools = {t.name: t for t in tools}
        self.max_tool_response_length, self.truncate_side = max_tool_response_length, truncate_side
        self.max_parallel_calls = max_parallel_calls
        self.metrics_seen = []  # what execute returned as metrics (upstream drops it)

    async def _call_tool(self, name, arguments, tools_kwargs, agent_data):
        tool, instance_id = None, None
        try:
            tool_args = json.loads(arguments)
            tool = self.tools[name]
            kwargs = tools_kwargs.get(name, {})
            instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))
            resp, reward, res = await tool.execute(instance_id, tool_args, agent_data=agent_data)
        except Exception as e:  # noqa: BLE001 - upstream turns every failure into a response
            return f"Error when executing tool: {e}", 0.0, {}
        finally:
            if tool and instance_id:
                await tool.release(instance_id)
        text = resp.text
        n = self.max_tool_response_length
        if text and len(text) > n:
            if self.truncate_side == "left":
                text = text[:n] + "...(truncated)"
            elif self.truncate_side == "right":
                text = "(truncated)..." + text[-n:]
            else:
                half = n // 2
                text = text[:half] + "...(truncated)..." + text[-half:]
        return text, reward, res

    async def _run(self, messages, tools_kwargs, assistant_turns):
        agent_data = AgentData(list(messages), tools_kwargs)
        out, user_turns, assistant = "", 0, 0
        for i, turn in enumerate(assistant_turns):
            out += turn
            assistant += 1
            calls = hermes_tool_calls(turn)
            if not calls or i == len(assistant_turns) - 1:
                break
            responses = await asyncio.gather(*(self._call_tool(n, a, tools_kwargs, agent_data)
                                               for n, a in calls[:self.max_parallel_calls]))
            for text, reward, metrics in responses:
                self.metrics_seen.append(metrics)
                if reward is not None:
                    agent_data.tool_rewards.append(reward)
            agent_data.messages.extend({"role": "tool", "content": t} for t, _, _ in responses)
            out += render_tool_messages([t for t, _, _ in responses])
            user_turns += 1
        extra_fields = {"turn_scores": [], "tool_rewards": agent_data.tool_rewards}
        return out, extra_fields, user_turns + assistant + 1

    def run(self, messages, tools_kwargs, assistant_turns):
        return asyncio.run(self._run(messages, tools_kwargs, assistant_turns))
