"""Small helpers shared by the integrations (no third-party imports)."""

import json
import re

# Search-R1 wraps retrieved evidence in these tags; rlsearch's mutation
# verifier uses the same wrapping (sdk.DefaultObservationTemplate).
_INFO_RE = re.compile(r"<information>(.*?)</information>", re.DOTALL)
_CODE_RE = re.compile(r"<code>(.*?)</code>", re.DOTALL)

# The calls and observations of a rollout's text, in order: verl's hermes
# tool calls (verl/experimental/agent_loop/tool_parser.py, HermesToolParser:
# <tool_call>JSON</tool_call>) answered by <tool_response> blocks (Qwen2.5 /
# Qwen3 chat templates render a tool message as "<tool_response>\n...\n
# </tool_response>"), and Search-R1's <search> / <code> actions answered by
# <information> blocks (search_r1/llm_agent/generation.py). One alternation,
# so that a <code> inside a tool call's JSON or inside an observation is part
# of that match, not an action of its own.
_EVENT_RE = re.compile(r"<tool_call>(?P<tool_call>.*?)</tool_call>"
                       r"|<tool_response>(?P<tool_response>.*?)</tool_response>"
                       r"|<information>(?P<information>.*?)</information>"
                       r"|<search>(?P<search>.*?)</search>"
                       r"|<code>(?P<code>.*?)</code>", re.DOTALL)

# Search-R1's prompt template (scripts/data_process/nq_search.py make_prefix,
# and verl's examples/data_preprocess/preprocess_search_r1_dataset.py) ends
# with "Question: {question}\n".
_QUESTION_RE = re.compile(r"Question:[ \t]*([^\n]*)")


def as_list(v):
    """Returns v as a list of strings: None -> [], a string -> [s], a list,
    tuple or numpy array (parquet columns arrive as numpy arrays in verl) ->
    its items as strings. Raises TypeError for other types."""
    if v is None:
        return []
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
                x = x.tolist()
            if isinstance(x, (list, tuple)):
                out.extend(str(y) for y in x)
            elif x is not None:
                out.append(str(x))
        return out
    raise TypeError(f"want a string or a list of strings, got {type(v).__name__}")


def first(d, *keys):
    """The value of the first key present (and not None) in dict d, else None."""
    if isinstance(d, dict):
        for k in keys:
            if d.get(k) is not None:
                return d[k]
    return None


def code_blocks(text):
    """The contents of every complete <code>...</code> block of text, in order."""
    return [m.group(1) for m in _CODE_RE.finditer(text or "")]


def program_request(code, question="", budgets=None, rid=None):
    """The /v1/programs/execute item for a program as the policy wrote it:
    code holding a <code>...</code> block is sent as "response" (the server
    runs its last block), else as "code". Shared by the verl tool, the Search-R1
    hook and the RPL reward's replay, so that all three run the same program."""
    req = {"question": question or ""}
    if rid is not None:
        req["id"] = rid
    req["response" if "</code>" in code else "code"] = code
    if budgets:
        req["budgets"] = budgets
    return req


def _tool_code(payload, tool_name):
    """(is a call, code) of a hermes tool call's JSON: is a call when verl's
    parser would make a FunctionCall of it (valid JSON with name and
    arguments); code when it calls tool_name with a string argument "code"
    (or "program", which the tool also reads)."""
    try:
        call = json.loads(payload)
        name, args = call["name"], call["arguments"]
    except (ValueError, TypeError, KeyError):
        return False, None  # verl logs "Failed to decode tool call" and makes no call
    if name != tool_name:
        return True, None
    if isinstance(args, str):  # some policies write the arguments as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            return True, None
    if not isinstance(args, dict):
        return True, None
    code = args.get("code", args.get("program"))
    return True, code if isinstance(code, str) and code.strip() else None


def answered_programs(text, tool_name="retrieval_program"):
    """The retrieval programs of a rollout's text that got an observation, in
    order, as [(code, observation)]: hermes tool calls of tool_name (their
    "code" argument) and <code> blocks (inner text, surrounding newlines
    stripped as the Search-R1 hook sends it).

    A call counts when an observation answers it: the k-th <tool_response>
    or <information> block after a run of calls answers the k-th call of the
    run (verl runs the first max_parallel_calls calls of a turn and answers
    each; Search-R1 answers its one action), and calls left unanswered when
    the next turn starts, or at the end (the rollout hit its length limit),
    never ran. Other tools' calls and <search> actions take their answers
    too. When the text holds no observation block at all (a chat template
    without these tags), every program is returned with observation None."""
    events = [(m.lastgroup, m.group(m.lastgroup)) for m in _EVENT_RE.finditer(text or "")]
    if not any(kind in ("tool_response", "information") for kind, _ in events):
        out = []
        for kind, body in events:
            code = _tool_code(body, tool_name)[1] if kind == "tool_call" else body.strip("\r\n") if kind == "code" else None
            if code is not None and code.strip():
                out.append((code, None))
        return out
    out, pending, after_obs = [], [], False
    for kind, body in events:
        if kind in ("tool_response", "information"):
            if pending:
                code = pending.pop(0)
                if code is not None:
                    out.append((code, body))
            after_obs = True
            continue
        if kind == "tool_call":
            ok, code = _tool_code(body, tool_name)
            if not ok:
                continue
        elif kind == "code":
            code = body.strip("\r\n")
            code = code if code.strip() else None
        else:  # <search>: another action, answered by its own <information>
            code = None
        if after_obs:
            pending, after_obs = [], False  # calls of the last turn that got no answer never ran
        pending.append(code)
    return out


def question_from_prompt(text):
    """The question of a Search-R1-style prompt: the text after the last
    "Question:" on its line, stripped; "" when there is none."""
    found = _QUESTION_RE.findall(text or "")
    return found[-1].strip() if found else ""


def turn_from_result(res, program=None, printed_ids=None, observation=None):
    """An RPL reward turn (reward.RPLTurn) from an execute result: printed_ids
    (printed_ids when given: the documents the policy was shown after a cut),
    retrieval_calls (stats.retrieval_calls or stats.calls, whichever the
    server version writes), candidates, printed_tokens, observation (the one
    given, else the result's) and program. Accepts a turn dict with the
    counts at its top level too. The one turn builder of the verl tool and the
    rewards."""
    if not isinstance(res, dict):
        raise TypeError(f"rlsearch: a turn must be an object, got {type(res).__name__}")
    stats = res.get("stats") if isinstance(res.get("stats"), dict) else res
    turn = {"printed_ids": as_list(res.get("printed_ids") if printed_ids is None else printed_ids),
            "retrieval_calls": int(stat(stats, "retrieval_calls", "calls")),
            "candidates": int(stat(stats, "candidates"))}
    obs = observation if observation is not None else res.get("observation")
    if obs is not None:
        turn["observation"] = obs
    prog = program if program is not None else res.get("program")
    if prog is not None:
        turn["program"] = prog
    pt = stat(stats, "printed_tokens", default=None)
    if pt is not None:
        turn["printed_tokens"] = int(pt)
    return turn


def stat(stats, *names, default=0):
    """Returns the first of names present in the stats dict (field names may
    change between server versions, e.g. "calls" / "retrieval_calls")."""
    if isinstance(stats, dict):
        for n in names:
            if n in stats and stats[n] is not None:
                return stats[n]
    return default


def split_turns(text, prompt=""):
    """Splits a flat rollout (policy text with <information>...</information>
    observations, as Search-R1 and verl's search loops write them) into
    rlsearch trajectory turns: [{"role": "prompt"|"model"|"observation", "text"}].
    The observation turn holds the whole <information> block; the texts
    concatenate back to prompt + text."""
    turns = []
    if prompt:
        turns.append({"role": "prompt", "text": prompt})
    pos = 0
    for m in _INFO_RE.finditer(text):
        if m.start() > pos:
            turns.append({"role": "model", "text": text[pos:m.start()]})
        turns.append({"role": "observation", "text": m.group(0)})
        pos = m.end()
    if pos < len(text):
        turns.append({"role": "model", "text": text[pos:]})
    return turns


def dotted(d, path):
    """d["a"]["b"] for path "a.b"; raises KeyError naming the path."""
    cur = d
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(f"reward result has no field {path!r}")
        cur = cur[part]
    return cur
