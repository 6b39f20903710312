"""verl reward functions for the rlsearch rewards (QA, RPL, Search-P1, ProRetrieval, retrieval metrics).

Three shapes, for the three ways verl calls a reward function:

- ``compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kw)``
  (coroutine): verl >= 0.7's reward loop (``reward_model.use_reward_loop=True``,
  the default since 2025-12; verl/experimental/reward_loop), which awaits it
  once per sample, many at once. Calls that arrive within 5 ms of each other
  go to the server as one request per kind, in chunks of 1,024
  (integrations.microbatch.AsyncBatcher), so the reward loop costs about
  what the batch path costs.
- ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw)``
  (plain function): the per-sample managers (verl's naive, DAPO, PRIME; the
  reward loop runs a plain function in its thread pool). Concurrent calls
  from several threads are gathered the same way (ThreadBatcher); a lone
  caller is sent at once.
- ``compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kw)``:
  verl's BatchRewardManager (``reward_model.reward_manager=batch``, verl <= 0.6
  or ``use_reward_loop=False``): one request per reward kind for the batch.

Each result is a dict with one fixed key set per configuration (KEYS, see
``keys``): "score" (the scalar reward), "error" (1.0 when the server refused
the sample and ``on_error="zero"`` scored it 0.0, else 0.0), and the kind's
numeric components (KIND_KEYS), each filled with 0.0 (NEUTRAL) when the
sample has no such value (another kind, a refused sample). verl takes the key
list of a batch from its first sample (agent_loop.py _postprocess) and the
batch manager builds one list per key, so keys that differ between samples
raise KeyError or give lists of different lengths; with a fixed key set
neither can happen. With ``kind`` fixed the keys are that kind's; with the
kind taken per sample (``extra_info["reward_kind"]``) they are the union over
``kinds`` (default: every kind).

verl config (see integrations/README.md for each verl version):

    custom_reward_function.path=integrations/rewards.py
    custom_reward_function.name=compute_score_async       # reward loop (verl >= 0.7)
    +custom_reward_function.reward_kwargs.kind=rpl
    +custom_reward_function.reward_kwargs.url=http://127.0.0.1:8000

reward_kwargs: kind (qa | rpl | search-p1 | proretrieval | retrieval; default from
extra_info["reward_kind"], else "qa" for Search-R1's data sources
searchR1_*), kinds (the kinds a per-sample choice may take, for the key set),
url (default $RLSEARCH_URL, the tool config's url, else
http://127.0.0.1:8000), score_key (dotted field of the server's result used
as "score"; DEFAULT_SCORE_KEY), timeout, max_retries, backoff (client retry
policy), answer_tag_limit (qa with score_key em: Search-R1's rule that a
correct answer with more than this many <answer> or </answer> tags scores
1/4; default 10, None disables), numeric_sign ("squad", Search-R1's
normalisation, where gold -5 matches 5; "strict" keeps a number's sign and
value; default: the server's), on_error ("raise" or "zero"), and for rpl's
replay: tool_config (the verl tool YAML: its url, budgets, observation budget
and tool name are used, so that the replay runs what the tool ran), or
tool_name, budgets, max_observation_chars, max_observation_tokens, tokenizer,
empty_observation one by one.

What each kind reads (ground_truth may be verl's {"target": [...]} dict,
a list, or a string; numpy arrays are accepted):

- qa: golden_answers = ground_truth["target"] (or the list itself); response = solution_str.
- rpl: golden answers as qa; gold support from ground_truth or extra_info
  ("gold_ids" / "gold_passage_ids", "gold_titles"); turns from
  extra_info["turns"] when given, else replayed: every retrieval program of
  solution_str that got an observation (verl tool calls of the tool's name
  answered by a <tool_response>, <code> blocks answered by <information>;
  _util.answered_programs) runs again on /v1/programs/execute (same server,
  same index: the same evidence; one batched request) with the question
  (extra_info "question", else the tool's create_kwargs question), and its
  observation is cut by the tool's budget, so that V_ret credits what the
  policy was shown. This is how the RPL reward works on current verl, whose
  ToolAgentLoop creates and releases a tool instance for every single call
  and never calls calc_reward: the programs are in the response text, the
  runtime is deterministic, and nothing has to be kept on the server (no
  rollout id reaches the reward function; a restarted or replicated server
  gives the same answer). "replayed" counts the replayed programs and
  "replay_mismatch" those whose observation differs from the one in the
  response (another index, or verl's max_tool_response_length cut).
- search-p1: question (extra_info or ground_truth "question"), golden
  answers, response = solution_str, qid (extra_info "qid", else "index"),
  optional plan / reference_plan from extra_info.
- proretrieval: ground truth ids (the list, or ground_truth["ground_truth"] /
  ["target"]); executed, ranked, exec_error, collection, response_tokens
  from extra_info.
- retrieval (query-rewriting RL, DeepRetrieval / ConvSearch-R1 style): the
  policy's answer is a query (or a list of queries, fused by RRF), searched on
  the served retriever and scored against gold ids by metric@k (recall,
  ndcg, hit, mrr; trec_eval's definitions, reward/retrieval.go); gold ids
  from ground_truth (a list, or "gold_ids" / "gold_passage_ids" / "target")
  or extra_info, graded relevance from "relevance" ({id: grade}); k, metric
  and retriever from reward_kwargs (retrieval_k, retrieval_metric,
  retriever) or extra_info (k, metric, retriever); default the server's
  (recall@10 on the default retriever).

Errors: a sample the server refuses (HTTP 400 naming rollouts[i].field or
programs[i].field) raises integrations.client.RequestError to its caller
only (compute_score_batch: for the batch), or with on_error="zero" is scored
0.0 with "error" 1.0 (logged) while the rest are scored; an unreachable
server raises UnavailableError after the retries; bad reward_kwargs raise
ValueError naming the key. All functions are safe to call from many threads
and event loops at once.
"""

import logging
import os
import re
import threading

from integrations import _util
from integrations.client import REWARD_KINDS, Client, RequestError
from integrations.microbatch import AsyncBatcher, ThreadBatcher
from integrations.observation import ObservationBudget

logger = logging.getLogger(__name__)

DEFAULT_URL = "http://127.0.0.1:8000"

# The reward each kind returns as "score" (dotted path in the server's result):
# qa: exact match as Search-R1's qa_em reward; rpl: answer EM (the outcome
# reward; V_ret is in the extras and selectable with score_key=v_ret);
# search-p1 and proretrieval: their total.
DEFAULT_SCORE_KEY = {"qa": "em", "rpl": "qa.em", "search-p1": "total", "proretrieval": "total",
                     "retrieval": "reward"}

# Search-R1's answer-tag flood rule (verl/utils/reward_score/search_r1_like_qa_em.py).
DEFAULT_ANSWER_TAG_LIMIT = 10

# The tool name the RPL replay looks for in verl tool calls
# (verl_program_tool.TOOL_NAME; the YAML's tool_schema.function.name).
DEFAULT_TOOL_NAME = "retrieval_program"

# The numeric components of each kind's result, flattened as
# <field> or <object>_<field> ("@" written "_at_"), booleans as 0/1 (the
# server's result types: reward/qa.go QAScores, rpl.go RPLScores, searchp1.go,
# proretrieval.go). A test checks that every numeric field the server returns
# is listed. rpl adds the replay's counts: replayed (programs replayed from
# the response), replay_mismatch (of those, observations that differ from
# the response's), observation_cut (documents the observation budget cut).
KIND_KEYS = {
    "qa": ("em", "f1", "contains", "found", "gold_empty_after_normalize", "answer_tag_flood"),
    "rpl": ("v_ret", "coverage", "gold_covered", "n_gold", "turns", "retrieval_calls", "candidates",
            "printed_docs", "printed_tokens", "qa_em", "qa_f1", "qa_contains", "qa_found",
            "qa_gold_empty_after_normalize", "replayed", "replay_mismatch", "observation_cut"),
    "search-p1": ("total", "format", "path", "outcome", "correct", "r_acc", "r_reason", "s_self", "s_ref",
                  "r_planner", "n_plan", "n_exec", "n_actions", "n_ref", "n_ref_covered", "ref_available",
                  "format_parts_answer", "format_parts_reasoning", "format_parts_tool_calls",
                  "format_parts_structure", "qa_em", "qa_f1", "qa_contains", "qa_found",
                  "qa_gold_empty_after_normalize"),
    "proretrieval": ("total", "format", "exec", "result", "length", "tokens", "ranked", "metrics_hit_at_1",
                     "metrics_hit_at_3", "metrics_mrr", "metrics_ndcg_at_3"),
    "retrieval": ("reward", "recall", "ndcg", "hit", "mrr", "found", "k", "n_relevant", "n_retrieved_relevant"),
}
KEYS = ("score", "error")  # first in every result, whatever the kind
NEUTRAL = 0.0  # the value of a component a sample does not have

_OPEN, _CLOSE = re.compile(r"<answer>"), re.compile(r"</answer>")

_clients = {}
_clients_lock = threading.Lock()


def _client(url, timeout, max_retries, backoff):
    key = (url, timeout, max_retries, backoff)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = _clients[key] = Client(url, timeout=timeout, max_retries=max_retries, backoff=backoff)
        return c


def _tool_settings(path):
    """The RetrievalProgramTool entry of a verl tool YAML: (config, tool name)."""
    import yaml  # noqa: PLC0415 - only with tool_config

    try:
        with open(path, encoding="utf-8") as f:
            spec = yaml.safe_load(f)
    except OSError as e:
        raise ValueError(f"rlsearch reward: tool_config {path!r}: {e}") from None
    for t in (spec or {}).get("tools") or []:
        if str(t.get("class_name", "")).endswith("RetrievalProgramTool"):
            name = (((t.get("tool_schema") or {}).get("function") or {}).get("name")) or DEFAULT_TOOL_NAME
            return dict(t.get("config") or {}), name
    raise ValueError(f"rlsearch reward: tool_config {path!r} has no RetrievalProgramTool entry under tools")


class Settings:
    """The reward_kwargs of one configuration, checked (ValueError names the
    key) and with defaults; equal kwargs give the same key (batching)."""

    def __init__(self, kind=None, kinds=None, url=None, score_key=None, timeout=60.0, max_retries=5, backoff=0.5,
                 answer_tag_limit=DEFAULT_ANSWER_TAG_LIMIT, on_error="raise", tool_config=None, tool_name=None,
                 budgets=None, max_observation_chars=None, max_observation_tokens=None, tokenizer=None,
                 empty_observation=None, numeric_sign=None, retrieval_k=None, retrieval_metric=None,
                 retriever=None, **ignored):
        # ignored: what verl adds (reward_router_address, reward_model_tokenizer) and older keys.
        if kind is not None and kind not in REWARD_KINDS:
            raise ValueError(f"rlsearch reward: kind {kind!r} is not one of {', '.join(REWARD_KINDS)}")
        self.kind = kind
        kinds = REWARD_KINDS if kinds is None else tuple(_util.as_list(kinds))
        for k in kinds:
            if k not in REWARD_KINDS:
                raise ValueError(f"rlsearch reward: kinds entry {k!r} is not one of {', '.join(REWARD_KINDS)}")
        self.kinds = (kind,) if kind is not None else kinds
        if on_error not in ("raise", "zero"):
            raise ValueError(f"rlsearch reward: on_error must be 'raise' or 'zero', got {on_error!r}")
        self.on_error, self.score_key, self.answer_tag_limit = on_error, score_key, answer_tag_limit
        if numeric_sign not in (None, "squad", "strict"):
            raise ValueError(f"rlsearch reward: numeric_sign must be 'squad' or 'strict', got {numeric_sign!r}")
        self.options = {"numeric_sign": numeric_sign} if numeric_sign else {}
        if retrieval_metric not in (None, "recall", "ndcg", "hit", "mrr"):
            raise ValueError(f"rlsearch reward: retrieval_metric must be recall, ndcg, hit or mrr, got {retrieval_metric!r}")
        if retrieval_k is not None and (not isinstance(retrieval_k, int) or isinstance(retrieval_k, bool)
                                        or not 1 <= retrieval_k <= 1000):
            raise ValueError(f"rlsearch reward: retrieval_k must be an integer in 1..1000, got {retrieval_k!r}")
        self.retrieval = {k: v for k, v in (("k", retrieval_k), ("metric", retrieval_metric), ("retriever", retriever))
                          if v is not None}
        tool = {}
        if tool_config:
            tool, yaml_name = _tool_settings(tool_config)
            tool_name = tool_name or yaml_name
        self.url = url or os.environ.get("RLSEARCH_URL") or tool.get("url") or tool.get("retrieval_service_url") \
            or DEFAULT_URL
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.tool_name = tool_name or DEFAULT_TOOL_NAME
        budgets = budgets if budgets is not None else tool.get("budgets")
        if budgets is not None and not isinstance(budgets, dict):
            raise ValueError(f"rlsearch reward: budgets must be a mapping, got {type(budgets).__name__}")
        self.budgets = dict(budgets) if budgets else None
        obs = {k: v for k, v in tool.items() if k in ("max_observation_chars", "max_observation_tokens", "tokenizer")}
        for k, v in (("max_observation_chars", max_observation_chars), ("max_observation_tokens", max_observation_tokens),
                     ("tokenizer", tokenizer)):
            if v is not None:
                obs[k] = v
        self.observation = ObservationBudget.from_config(obs)
        self.empty_observation = empty_observation if empty_observation is not None else \
            tool.get("empty_observation", "(the program printed nothing)")
        self.keys = KEYS + tuple(dict.fromkeys(k for kd in self.kinds for k in KIND_KEYS[kd]))
        self.key = (self.kind, self.kinds, self.url, self.score_key, self.timeout, self.max_retries, self.backoff,
                    self.answer_tag_limit, self.on_error, self.tool_name, repr(sorted((self.budgets or {}).items())),
                    self.observation.key(), self.empty_observation, numeric_sign,
                    repr(sorted(self.retrieval.items())))
        # The batchers' group key: a small int per distinct key tuple (hashed
        # once here, not on every per-sample call).
        with _settings_lock:
            self.group = _groups.setdefault(self.key, len(_groups))

    def client(self):
        return _client(self.url, self.timeout, self.max_retries, self.backoff)


_settings_cache = {}
_settings_lock = threading.Lock()
_groups = {}  # Settings.key -> Settings.group


_last = (None, None)  # the last kwargs and their Settings: one comparison per call, no allocation


def settings(**reward_kwargs):
    """The Settings of reward_kwargs (cached: the reward loop passes the same
    kwargs with every sample)."""
    return _settings_of(reward_kwargs)


def _settings_of(reward_kwargs):
    last_kw, last = _last
    if last_kw == reward_kwargs:
        return last
    s = _settings(reward_kwargs)
    globals()["_last"] = (reward_kwargs, s)
    return s


def _settings(reward_kwargs):
    try:
        ck = repr(sorted(reward_kwargs.items()))
    except TypeError:
        return Settings(**reward_kwargs)
    with _settings_lock:
        s = _settings_cache.get(ck)
    if s is None:
        s = Settings(**reward_kwargs)
        with _settings_lock:
            _settings_cache[ck] = s
    return s


def keys(**reward_kwargs):
    """The key set of every result under reward_kwargs, in order."""
    return settings(**reward_kwargs).keys


class _Sample:
    __slots__ = ("kind", "rollout", "solution", "extra", "replay")

    def __init__(self, kind, rollout, solution, extra):
        self.kind, self.rollout, self.solution, self.extra = kind, rollout, solution, extra
        self.replay = None  # rpl: [(program, observation in the response)]


def _kind_of(st, data_source, extra):
    k = st.kind or _util.first(extra, "reward_kind")
    if k is None and isinstance(data_source, str) and data_source.startswith("searchR1_"):
        k = "qa"
    if k is None:
        raise ValueError(f"rlsearch reward: no reward kind for data_source {data_source!r}: pass reward_kwargs "
                         f"kind={'|'.join(REWARD_KINDS)} or extra_info['reward_kind']")
    if k not in st.kinds:
        raise ValueError(f"rlsearch reward: kind {k!r} is not one of {', '.join(st.kinds)}")
    return k


def _answers(gt, extra):
    v = _util.first(gt, "target", "golden_answers", "answers") if isinstance(gt, dict) else gt
    if v is None:
        v = _util.first(extra, "golden_answers")
    return _util.as_list(v)


def _from(gt, extra, *keys_):
    v = _util.first(gt, *keys_) if isinstance(gt, dict) else None
    return v if v is not None else _util.first(extra, *keys_)


def _question(st, gt, extra):
    q = _from(gt, extra, "question")
    if q is None:  # verl datasets carry it in the tool's create_kwargs
        tk = _util.first(extra, "tools_kwargs")
        ck = (tk.get(st.tool_name) or {}).get("create_kwargs") if isinstance(tk, dict) else None
        q = _util.first(ck, "question")
        if q is None and isinstance(tk, dict):  # e.g. verl's Search-R1 data: under the "search" tool
            q = next((_util.first((v or {}).get("create_kwargs"), "question") for v in tk.values()
                      if isinstance(v, dict) and _util.first(v.get("create_kwargs"), "question")), None)
    return str(q or "")


def _sample(st, i, data_source, sol, gt, extra):
    extra = extra if isinstance(extra, dict) else {}
    sol = sol or ""
    kind = _kind_of(st, data_source, extra)
    rid = str(i)
    if kind == "qa":
        r = {"id": rid, "golden_answers": _answers(gt, extra), "response": sol}
    elif kind == "rpl":
        r = {"id": rid, "golden_answers": _answers(gt, extra), "response": sol,
             "gold_ids": _util.as_list(_from(gt, extra, "gold_ids", "gold_passage_ids")),
             "gold_titles": _util.as_list(_from(gt, extra, "gold_titles"))}
        turns = _util.first(extra, "turns")
        if turns is not None:
            r["turns"] = [_util.turn_from_result(t) for t in turns]
    elif kind == "search-p1":
        r = {"id": rid, "question": _question(st, gt, extra), "golden_answers": _answers(gt, extra), "response": sol}
        qid = _util.first(extra, "qid", "index", "id")
        if qid is not None:
            r["qid"] = str(qid)
        for k in ("plan", "reference_plan"):
            if _util.first(extra, k) is not None:
                r[k] = _util.as_list(extra[k])
    elif kind == "retrieval":
        g = _util.first(gt, "gold_ids", "gold_passage_ids", "target", "ground_truth") if isinstance(gt, dict) else gt
        if g is None:
            g = _util.first(extra, "gold_ids", "gold_passage_ids")
        r = {"id": rid, "response": sol, "gold_ids": _util.as_list(g)}
        rel = _from(gt, extra, "relevance")
        if isinstance(rel, dict):
            r["relevance"] = {str(k): int(v) for k, v in rel.items()}
        for k in ("k", "metric", "retriever"):
            v = _util.first(extra, k) if k not in st.retrieval else st.retrieval[k]
            if v is not None:
                r[k] = int(v) if k == "k" else str(v)
    else:  # proretrieval
        g = _util.first(gt, "ground_truth", "target") if isinstance(gt, dict) else gt
        r = {"id": rid, "response": sol, "ground_truth": _util.as_list(g)}
        for k in ("executed", "ranked", "exec_error", "collection", "response_tokens"):
            v = _util.first(extra, k)
            if v is not None:
                r[k] = _util.as_list(v) if k == "ranked" else v
    s = _Sample(kind, r, sol, extra)
    if kind == "rpl" and "turns" not in r:
        s.replay = _util.answered_programs(sol, st.tool_name)
    return s


def _field_index(e, prefix):
    m = re.match(re.escape(prefix) + r"\[(\d+)\]", e.field or "")
    return int(m.group(1)) if m else None


def _isolating(send, items, prefix, stop):
    """send(items) -> results, resending without each item the server
    refuses by name (HTTP 400 field "<prefix>[i]..."). Returns one result or
    RequestError per item; with stop, the first refusal is raised."""
    out = [None] * len(items)
    live = list(range(len(items)))
    while live:
        try:
            res = send([items[j] for j in live])
        except RequestError as e:
            i = _field_index(e, prefix)
            if stop or i is None or i >= len(live):
                raise
            out[live.pop(i)] = e
            continue
        for j, r in zip(live, res):
            out[j] = r
        break
    return out


def _norm_ws(s):
    return " ".join((s or "").split())


def _replay(st, client, samples, stop):
    """Runs the replayed programs of rpl samples (one request); sets each
    sample's turns, or returns its RequestError."""
    progs, owner = [], []
    for n, s in enumerate(samples):
        if s.replay is None:
            continue
        q = _question(st, None, s.extra)
        for code, _ in s.replay:
            progs.append(_util.program_request(code, q, st.budgets, rid=str(len(progs))))
            owner.append(n)
    errors = {}
    results = _isolating(lambda ps: client.execute(ps)[0], progs, "programs", stop) if progs else []
    for n, s in enumerate(samples):
        if s.replay is not None:
            s.rollout["turns"], s.rollout["_replay"] = [], [0, 0, 0]
    at = {}
    for p, n, res in zip(progs, owner, results):
        s = samples[n]
        k = at.get(n, 0)
        at[n] = k + 1
        if isinstance(res, RequestError):
            errors[n] = res
            continue
        obs = res.get("observation") or ""
        cut = st.observation.cut(obs, res.get("printed_ids") or [])
        shown = cut.text if cut.text.strip() else st.empty_observation
        seen = s.replay[k][1]
        counts = s.rollout["_replay"]
        counts[0] += 1
        counts[1] += int(seen is not None and _norm_ws(seen) != _norm_ws(shown) and _norm_ws(seen) != _norm_ws(cut.text))
        counts[2] += cut.docs_cut
        s.rollout["turns"].append(_util.turn_from_result(res, program=p.get("code", p.get("response")),
                                                         printed_ids=cut.printed_ids, observation=cut.text))
    return errors


def _flatten(res, prefix=""):
    out = {}
    for k, v in res.items():
        name = (prefix + k).replace("@", "_at_")
        if isinstance(v, bool):
            out[name] = float(v)
        elif isinstance(v, (int, float)):
            out[name] = float(v)
        elif isinstance(v, dict):
            out.update(_flatten(v, name + "_"))
    return out


def _row(st, s, res):
    key = st.score_key or DEFAULT_SCORE_KEY[s.kind]
    flat = _flatten(res)
    score = float(_util.dotted(res, key))
    if s.kind == "qa" and key == "em" and score > 0 and st.answer_tag_limit is not None:
        if len(_OPEN.findall(s.solution)) > st.answer_tag_limit or len(_CLOSE.findall(s.solution)) > st.answer_tag_limit:
            score /= 4
            flat["answer_tag_flood"] = 1.0
    counts = s.rollout.get("_replay")
    if counts is not None:
        flat["replayed"], flat["replay_mismatch"], flat["observation_cut"] = map(float, counts)
    row = {k: flat.get(k, NEUTRAL) for k in st.keys}
    row["score"], row["error"] = score, 0.0
    return row


def _refused(st, e):
    if st.on_error != "zero":
        return e
    row = dict.fromkeys(st.keys, NEUTRAL)
    row["error"] = 1.0
    return row


def score_samples(st, samples, stop=False):
    """Scores prepared samples: one outcome per sample (a result dict, or
    the RequestError of a refused sample under on_error="raise"). One
    execute request for the rpl replays and one rewards request per kind
    (sent again without each refused sample; with stop and on_error="raise",
    the first refusal is raised instead)."""
    stop = stop and st.on_error == "raise"
    out = [None] * len(samples)
    client = st.client()
    groups = {}
    for i, s in enumerate(samples):
        groups.setdefault(s.kind, []).append(i)
    for kind, idx in groups.items():
        group = [samples[i] for i in idx]
        failed = _replay(st, client, group, stop) if kind == "rpl" else {}
        live = [n for n in range(len(group)) if n not in failed]
        refused = list(failed.values())
        for n, e in failed.items():
            out[idx[n]] = _refused(st, e)
        rollouts = [{k: v for k, v in group[n].rollout.items() if k != "_replay"} for n in live]
        results = _isolating(lambda rs: client.rewards(kind, rs, **st.options), rollouts, "rollouts", stop) \
            if rollouts else []
        for n, res in zip(live, results):
            if isinstance(res, RequestError):
                refused.append(res)
                out[idx[n]] = _refused(st, res)
            else:
                out[idx[n]] = _row(st, group[n], res)
        if refused and st.on_error == "zero":
            logger.warning("rlsearch reward: %d of %d %s samples refused by the server, scored 0.0 with error=1; "
                           "first: %s", len(refused), len(group), kind, refused[0])
    return out


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """Scores a batch (BatchRewardManager); returns one dict per sample, in
    order, every one with the same keys (see the module doc). A refused
    sample raises its RequestError (on_error="raise") or is zeroed
    (on_error="zero")."""
    n = len(solution_strs)
    if len(data_sources) != n or len(ground_truths) != n or (extra_infos is not None and len(extra_infos) != n):
        raise ValueError(f"rlsearch reward: batch lengths differ: data_sources {len(data_sources)}, solution_strs {n}, "
                         f"ground_truths {len(ground_truths)}, extra_infos "
                         f"{len(extra_infos) if extra_infos is not None else 'None'}")
    st = settings(**kwargs)
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    samples = [_sample(st, i, data_sources[i], solution_strs[i], ground_truths[i], extras[i]) for i in range(n)]
    out = score_samples(st, samples, stop=True)
    for o in out:
        if isinstance(o, Exception):
            raise o
    return out


def _run_batch(key, items):
    st = items[0][0]
    return score_samples(st, [s for _, s in items])


# The reward loop's coroutines send a batch once 1,024 samples have joined,
# so that its request is on the wire while later samples are still being
# queued (bench_rewards.py, 4,096 QA samples, 15 interleaved reps: 1.46-1.49x
# the batch path's time in chunks of 1,024, 1.44-1.50x in chunks of 512,
# 1.66x as one request of 4,096).
ASYNC_MAX_BATCH = 1024

_threads = ThreadBatcher(_run_batch)
_async = AsyncBatcher(_run_batch, max_batch=ASYNC_MAX_BATCH)


def _one(data_source, solution_str, ground_truth, extra_info, kwargs):
    st = _settings_of(kwargs)
    return st, _sample(st, 0, data_source, solution_str, ground_truth, extra_info)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Per-sample form (verl's naive manager, and the reward loop with a plain
    function); same kwargs as compute_score_batch. Calls from several threads
    at once share requests (ThreadBatcher)."""
    st, s = _one(data_source, solution_str, ground_truth, extra_info, kwargs)
    return _threads.submit(st.group, (st, s))


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Per-sample coroutine for verl's reward loop; concurrent calls within 5
    ms become one request (AsyncBatcher). Same kwargs as compute_score_batch."""
    st = _settings_of(kwargs)
    return await _async.submit(st.group, (st, _sample(st, 0, data_source, solution_str, ground_truth, extra_info)))


def _fixed(kind):
    def per_sample(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
        kwargs["kind"] = kind
        return compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)

    async def per_sample_async(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
        kwargs["kind"] = kind
        return await compute_score_async(data_source, solution_str, ground_truth, extra_info, **kwargs)

    def batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
        kwargs["kind"] = kind
        return compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs)

    per_sample.__doc__ = f"compute_score with kind={kind!r}."
    per_sample_async.__doc__ = f"compute_score_async with kind={kind!r}."
    batch.__doc__ = f"compute_score_batch with kind={kind!r}."
    return per_sample, per_sample_async, batch


compute_score_qa, compute_score_qa_async, compute_score_qa_batch = _fixed("qa")
compute_score_rpl, compute_score_rpl_async, compute_score_rpl_batch = _fixed("rpl")
compute_score_search_p1, compute_score_search_p1_async, compute_score_search_p1_batch = _fixed("search-p1")
compute_score_proretrieval, compute_score_proretrieval_async, compute_score_proretrieval_batch = _fixed("proretrieval")
compute_score_retrieval, compute_score_retrieval_async, compute_score_retrieval_batch = _fixed("retrieval")
