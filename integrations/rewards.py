"""verl reward functions for the rlsearch rewards (QA, RPL, Search-P1, ProRetrieval).

Two shapes, as verl's reward managers call them:

- per sample (NaiveRewardManager, DAPO, PRIME):
  compute_score(data_source, solution_str, ground_truth, extra_info=None, **reward_kwargs) -> dict
- batched (BatchRewardManager, reward_manager=batch):
  compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **reward_kwargs) -> list[dict]

Each result is a dict with "score" (the scalar reward) and the reward's
numeric components flattened ("em", "f1", "v_ret", "qa_em", "total", ...),
which verl logs as reward_extra_info. A batch is scored with one HTTP request
per reward kind (chunks of 4,096), so a whole rollout batch costs one round
trip. verl config:

    custom_reward_function.path=integrations/rewards.py
    custom_reward_function.name=compute_score_batch        # with reward_model.reward_manager=batch
    +custom_reward_function.reward_kwargs.kind=rpl
    +custom_reward_function.reward_kwargs.url=http://127.0.0.1:8000

reward_kwargs: kind (qa | rpl | search-p1 | proretrieval; default from
extra_info["reward_kind"], else "qa" for Search-R1's data sources
searchR1_*), url (default $RLSEARCH_URL, else http://127.0.0.1:8000),
score_key (dotted field of the server's result used as "score"; defaults in
DEFAULT_SCORE_KEY), timeout, max_retries, backoff (client retry policy),
answer_tag_limit (qa with score_key em: Search-R1's rule that a correct
answer with more than this many <answer> or </answer> tags scores 1/4;
default 10, None disables).

What each kind reads (ground_truth may be verl's {"target": [...]} dict,
a list, or a string; numpy arrays are accepted):

- qa: golden_answers = ground_truth["target"] (or the list itself); response = solution_str.
- rpl: golden answers as qa; gold support from ground_truth or extra_info
  ("gold_ids" / "gold_passage_ids", "gold_titles"); turns from
  extra_info["turns"] when given, else every <code> block of solution_str
  is run again on /v1/programs/execute (same server, same index: the same
  evidence the policy saw; one batched request) with
  extra_info["question"] as `question`.
- search-p1: question (extra_info or ground_truth "question"), golden
  answers, response = solution_str, qid (extra_info "qid", else "index"),
  optional plan / reference_plan from extra_info.
- proretrieval: ground truth ids (the list, or ground_truth["ground_truth"] /
  ["target"]); executed, ranked, exec_error, collection, response_tokens
  from extra_info.

Errors: a rollout the server refuses (HTTP 400 naming rollouts[i].field)
raises integrations.client.RequestError, or with on_error="zero" scores that
sample 0.0 with "error" set and scores the rest; an unreachable server raises
UnavailableError after the retries.
"""

import os
import re
import threading

from integrations import _util
from integrations.client import REWARD_KINDS, Client, RequestError, stat

DEFAULT_URL = "http://127.0.0.1:8000"

# The reward each kind returns as "score" (dotted path in the server's result):
# qa: exact match as Search-R1's qa_em reward; rpl: answer EM (the outcome
# reward; V_ret is in the extras and selectable with score_key=v_ret);
# search-p1 and proretrieval: their total.
DEFAULT_SCORE_KEY = {"qa": "em", "rpl": "qa.em", "search-p1": "total", "proretrieval": "total"}

# Search-R1's answer-tag flood rule (verl/utils/reward_score/search_r1_like_qa_em.py).
DEFAULT_ANSWER_TAG_LIMIT = 10

_clients = {}
_clients_lock = threading.Lock()


def _client(url, timeout, max_retries, backoff):
    key = (url, timeout, max_retries, backoff)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = Client(url, timeout=timeout, max_retries=max_retries, backoff=backoff)
            _clients[key] = c
        return c


def _kind_of(kind, data_source, extra):
    k = kind or _util.first(extra, "reward_kind")
    if k is None and isinstance(data_source, str) and data_source.startswith("searchR1_"):
        k = "qa"
    if k is None:
        raise ValueError(f"rlsearch reward: no reward kind for data_source {data_source!r}: pass reward_kwargs "
                         f"kind={'|'.join(REWARD_KINDS)} or extra_info['reward_kind']")
    if k not in REWARD_KINDS:
        raise ValueError(f"rlsearch reward: kind {k!r} is not one of {', '.join(REWARD_KINDS)}")
    return k


def _answers(gt, extra):
    if isinstance(gt, dict):
        v = _util.first(gt, "target", "golden_answers", "answers")
    else:
        v = gt
    if v is None:
        v = _util.first(extra, "golden_answers")
    return _util.as_list(v)


def _from(gt, extra, *keys):
    v = _util.first(gt, *keys) if isinstance(gt, dict) else None
    return v if v is not None else _util.first(extra, *keys)


def _rollout(kind, i, sol, gt, extra):
    rid = str(i)
    if kind == "qa":
        return {"id": rid, "golden_answers": _answers(gt, extra), "response": sol}
    if kind == "rpl":
        r = {"id": rid, "golden_answers": _answers(gt, extra), "response": sol,
             "gold_ids": _util.as_list(_from(gt, extra, "gold_ids", "gold_passage_ids")),
             "gold_titles": _util.as_list(_from(gt, extra, "gold_titles"))}
        turns = _util.first(extra, "turns")
        if turns is not None:
            r["turns"] = [_turn(t) for t in turns]
        return r
    if kind == "search-p1":
        r = {"id": rid, "question": str(_from(gt, extra, "question") or ""), "golden_answers": _answers(gt, extra),
             "response": sol}
        qid = _util.first(extra, "qid", "index", "id")
        if qid is not None:
            r["qid"] = str(qid)
        for k in ("plan", "reference_plan"):
            if _util.first(extra, k) is not None:
                r[k] = _util.as_list(extra[k])
        return r
    # proretrieval
    g = _util.first(gt, "ground_truth", "target") if isinstance(gt, dict) else gt
    r = {"id": rid, "response": sol, "ground_truth": _util.as_list(g)}
    for k in ("executed", "ranked", "exec_error", "collection", "response_tokens"):
        v = _util.first(extra, k)
        if v is not None:
            r[k] = _util.as_list(v) if k == "ranked" else v
    return r


def _turn(t):
    """An RPL turn from a program result or a turn dict (stats.calls or
    retrieval_calls, whichever the server version writes)."""
    if not isinstance(t, dict):
        raise TypeError(f"rlsearch reward: extra_info turns must be objects, got {type(t).__name__}")
    stats = t.get("stats") if isinstance(t.get("stats"), dict) else t
    out = {"printed_ids": _util.as_list(t.get("printed_ids")),
           "retrieval_calls": int(stat(stats, "retrieval_calls", "calls")),
           "candidates": int(stat(stats, "candidates"))}
    if t.get("observation") is not None:
        out["observation"] = t["observation"]
    if t.get("program") is not None:
        out["program"] = t["program"]
    pt = stat(stats, "printed_tokens", default=None)
    if pt is not None:
        out["printed_tokens"] = int(pt)
    return out


def _fill_turns(client, rollouts, extras):
    """Runs the <code> blocks of RPL rollouts without turns (one request)."""
    progs, where = [], []
    for r, extra in zip(rollouts, extras):
        if "turns" in r:
            continue
        r["turns"] = []
        q = str(_util.first(extra, "question") or "")
        for code in _util.code_blocks(r["response"]):
            progs.append({"id": r["id"], "code": code, "question": q})
            where.append(r)
    if not progs:
        return
    results, _ = client.execute(progs)
    for r, p, res in zip(where, progs, results):
        t = _turn(res)
        t["program"] = p["code"]
        r["turns"].append(t)


def _flatten(res, prefix=""):
    out = {}
    for k, v in res.items():
        name = (prefix + k).replace("@", "_at_")
        if isinstance(v, bool):
            out[name] = float(v)
        elif isinstance(v, (int, float)):
            out[name] = float(v)
        elif isinstance(v, dict) and k != "format_parts":
            out.update(_flatten(v, name + "_"))
    return out


_ANSWER_OPEN = re.compile(r"<answer>")
_ANSWER_CLOSE = re.compile(r"</answer>")


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, *, kind=None, url=None,
                        score_key=None, timeout=60.0, max_retries=5, backoff=0.5,
                        answer_tag_limit=DEFAULT_ANSWER_TAG_LIMIT, on_error="raise", **kwargs):
    """Scores a batch; returns one dict per sample, in order (see the module doc)."""
    n = len(solution_strs)
    if len(data_sources) != n or len(ground_truths) != n or (extra_infos is not None and len(extra_infos) != n):
        raise ValueError(f"rlsearch reward: batch lengths differ: data_sources {len(data_sources)}, solution_strs {n}, "
                         f"ground_truths {len(ground_truths)}, extra_infos "
                         f"{len(extra_infos) if extra_infos is not None else 'None'}")
    if on_error not in ("raise", "zero"):
        raise ValueError(f"rlsearch reward: on_error must be 'raise' or 'zero', got {on_error!r}")
    extras = [e if isinstance(e, dict) else {} for e in (extra_infos if extra_infos is not None else [None] * n)]
    client = _client(url or os.environ.get("RLSEARCH_URL") or DEFAULT_URL, timeout, max_retries, backoff)
    groups = {}
    for i in range(n):
        k = _kind_of(kind, data_sources[i], extras[i])
        groups.setdefault(k, []).append(i)
    out = [None] * n
    for k, idx in groups.items():
        rollouts = [_rollout(k, i, solution_strs[i] or "", ground_truths[i], extras[i]) for i in idx]
        if k == "rpl":
            _fill_turns(client, rollouts, [extras[i] for i in idx])
        results = _score(client, k, rollouts, on_error)
        key = score_key or DEFAULT_SCORE_KEY[k]
        for i, res in zip(idx, results):
            if "error" in res and "id" not in res:
                out[i] = {"score": 0.0, "error": res["error"]}
                continue
            d = _flatten(res)
            s = float(_util.dotted(res, key))
            if k == "qa" and key == "em" and s > 0 and answer_tag_limit is not None:
                sol = solution_strs[i] or ""
                if len(_ANSWER_OPEN.findall(sol)) > answer_tag_limit or len(_ANSWER_CLOSE.findall(sol)) > answer_tag_limit:
                    s /= 4
            d["score"] = s
            out[i] = d
    if len(groups) > 1:  # verl appends every key per sample: keep the keys all samples share
        common = set.intersection(*(set(d) for d in out))
        out = [{k: v for k, v in d.items() if k in common} for d in out]
    return out


def _score(client, kind, rollouts, on_error):
    """Scores rollouts; with on_error="zero" a rollout the server refuses is
    taken out (its result {"error": msg}) and the rest sent again."""
    live = list(range(len(rollouts)))
    results = [None] * len(rollouts)
    while live:
        try:
            res = client.rewards(kind, [rollouts[j] for j in live])
        except RequestError as e:
            m = re.match(r"rollouts\[(\d+)\]", e.field)
            if on_error != "zero" or not m or int(m.group(1)) >= len(live):
                raise
            bad = live.pop(int(m.group(1)))
            results[bad] = {"error": f"{e.message} (field {e.field})"}
            continue
        for j, r in zip(live, res):
            results[j] = r
        break
    return results


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Per-sample form (verl's default reward manager); same kwargs as compute_score_batch."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **kwargs)[0]


def _fixed(kind):
    def per_sample(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
        kwargs["kind"] = kind
        return compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)

    def batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
        kwargs["kind"] = kind
        return compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs)

    per_sample.__doc__ = f"compute_score with kind={kind!r}."
    batch.__doc__ = f"compute_score_batch with kind={kind!r}."
    return per_sample, batch


compute_score_qa, compute_score_qa_batch = _fixed("qa")
compute_score_rpl, compute_score_rpl_batch = _fixed("rpl")
compute_score_search_p1, compute_score_search_p1_batch = _fixed("search-p1")
compute_score_proretrieval, compute_score_proretrieval_batch = _fixed("proretrieval")
