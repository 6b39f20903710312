"""Search-R1 hook: <code> retrieval programs next to <search> in its generation loop.

Search-R1's LLMGenerationManager (search_r1/llm_agent/generation.py, checked at
a14dc3a) cuts each response at </search> or </answer> (_postprocess_responses),
parses the first <search>/<answer> tag (postprocess_predictions) and runs one
batched /retrieve per step (execute_predictions -> batch_search). install()
replaces those three methods on the class so that a <code>...</code> block is
a third action: every program of the step goes to rlsearch's
/v1/programs/execute in one batched request, and its printed evidence comes
back in the same wrapping as search results, each passage printed as
_passages2string prints a search result (`Doc 1(Title: "X") text`, the
server's default sdk.DefaultDocFormat). <search> and <answer> behave exactly
as before (same observation text, same dones / valid_action / is_search), and
so does config.no_think_rl (upstream raises ValueError('stop') for it).

    from search_r1.llm_agent.generation import LLMGenerationManager
    from integrations import search_r1_hook
    search_r1_hook.install(LLMGenerationManager)          # before the trainer builds the manager

Program URL: manager.config.program_url when the config has it, else the
server of config.search_url (Search-R1's /retrieve URL, served by the same
`rlsearch serve`). The `question` global of programs, per batch row: the
question of the row's prompt, found in the prompt Search-R1's templates build
("... Question: {question}\n", scripts/data_process/nq_search.py make_prefix):
install() also wraps run_llm_loop, which decodes each row's initial prompt
once at the start of the rollout; manager.rlsearch_questions (a list aligned
with the batch rows), when the caller sets it, overrides. So a stock
Search-R1 trainer needs no change beyond install().

is_search counts a program as a search action (valid_search_stats); the
per-row action of the last step is kept in manager.last_actions.

Failures: a 4xx becomes an observation "Error (bad_request): ..."; connection
errors, timeouts, 429 and 5xx are retried with back-off and, when retries run
out, become "Error (unavailable): ..."; the loop goes on either way.
"""

import re
from typing import Any, List, Tuple

from integrations import _util
from integrations.client import Client, RequestError, ServiceError, UnavailableError

# Search-R1's tag grammar, with code added.
ACTION_PATTERN = re.compile(r"<(search|code|answer)>(.*?)</\1>", re.DOTALL)

# Search-R1's observation wrapping (execute_predictions) and its message for
# an invalid action, extended to name <code>.
OBS_TEMPLATE = "\n\n<information>{}</information>\n\n"
INVALID_ACTION = ("\nMy previous action is invalid. If I want to search, I should put the query between <search> and "
                  "</search>. If I want to run a retrieval program, I should put it between <code> and </code>. If I "
                  "want to give the final answer, I should put the answer between <answer> and </answer>. "
                  "Let me try again.\n")

_ORIGINALS = "_rlsearch_originals"


def cut_response(resp: str) -> str:
    """Cuts a response after its first </search> or </code> (whichever comes
    first), else after its first </answer>, else leaves it (Search-R1's rule,
    with </code> as a second stop tag)."""
    ends = [i for i in (resp.find("</search>"), resp.find("</code>")) if i >= 0]
    if ends:
        i = min(ends)
        tag = "</search>" if resp.startswith("</search>", i) else "</code>"
        return resp[:i] + tag
    if "</answer>" in resp:
        return resp.split("</answer>")[0] + "</answer>"
    return resp


def _postprocess_responses(self, responses):
    """Replacement of LLMGenerationManager._postprocess_responses (same
    signature): returns (token ids, strings) cut by cut_response."""
    responses_str = self.tokenizer.batch_decode(responses, skip_special_tokens=True)
    responses_str = [cut_response(r) for r in responses_str]
    if getattr(self.config, "no_think_rl", False):
        raise ValueError("stop")  # upstream's no_think_rl branch raises before anything else (generation.py)
    return self._batch_tokenize(responses_str), responses_str


def postprocess_predictions(self, predictions: List[Any]) -> Tuple[List[int], List[bool]]:
    """Replacement of LLMGenerationManager.postprocess_predictions: (actions,
    contents) with action "search", "code", "answer" or None (the first tag
    of the prediction, as Search-R1 reads it). Programs keep their inner
    text unstripped apart from surrounding newlines."""
    actions, contents = [], []
    for p in predictions:
        if not isinstance(p, str):
            raise ValueError(f"Invalid prediction type: {type(p)}")
        m = ACTION_PATTERN.search(p)
        if m:
            action = m.group(1)
            content = m.group(2).strip("\r\n") if action == "code" else m.group(2).strip()
        else:
            action, content = None, ""
        actions.append(action)
        contents.append(content)
    return actions, contents


def _program_client(self):
    c = getattr(self, "_rlsearch_client", None)
    if c is None:
        url = getattr(self.config, "program_url", None) or getattr(self.config, "search_url", None)
        if not url:
            raise ValueError("search_r1_hook: set config.program_url or config.search_url to the rlsearch server")
        c = Client(url, timeout=getattr(self.config, "program_timeout", 60.0),
                   max_retries=getattr(self.config, "program_max_retries", 5))
        self._rlsearch_client = c
    return c


def batch_programs(self, programs: List[str], questions: List[str]) -> List[str]:
    """Runs the programs of one step in one /v1/programs/execute request and
    returns each observation (an error line when the service refused or
    failed)."""
    if not programs:
        return []
    reqs = [_util.program_request(code, q, rid=str(i)) for i, (code, q) in enumerate(zip(programs, questions))]
    try:
        results, _ = _program_client(self).execute(reqs)
    except RequestError as e:
        where = f" (field {e.field})" if e.field else ""
        return [f"Error (bad_request): {e.message}{where}\n"] * len(programs)
    except UnavailableError as e:
        return [f"Error (unavailable): the retrieval service did not answer after {e.attempts} attempts\n"] * len(programs)
    except ServiceError as e:
        return [f"Error (internal_error): {e}\n"] * len(programs)
    return [r.get("observation") or "" for r in results]


def execute_predictions(self, predictions: List[str], pad_token: str, active_mask=None, do_search=True,
                        **kwargs) -> List[str]:
    """Replacement of LLMGenerationManager.execute_predictions (same
    arguments; extra keyword arguments of forks, e.g. do_rerank, pass through
    to nothing). Returns next_obs, dones, valid_action, is_search."""
    cur_actions, contents = self.postprocess_predictions(predictions)
    if active_mask is None:
        active_mask = [True] * len(predictions)
    next_obs, dones, valid_action, is_search = [], [], [], []

    search_queries = [c for a, c in zip(cur_actions, contents) if a == "search"]
    code_rows = [i for i, a in enumerate(cur_actions) if a == "code"]
    if do_search:
        search_results = self.batch_search(search_queries) if search_queries else []
        assert len(search_results) == len(search_queries)
        questions = [row_question(self, i) for i in code_rows]
        program_results = batch_programs(self, [contents[i] for i in code_rows], questions)
    else:
        search_results = [""] * len(search_queries)
        program_results = [""] * len(code_rows)
    search_results, program_results = list(search_results), list(program_results)

    for action, active in zip(cur_actions, active_mask):
        if not active:
            next_obs.append("")
            dones.append(1)
            valid_action.append(0)
            is_search.append(0)
        elif action == "answer":
            next_obs.append("")
            dones.append(1)
            valid_action.append(1)
            is_search.append(0)
        elif action == "search":
            next_obs.append(OBS_TEMPLATE.format(search_results.pop(0).strip()))
            dones.append(0)
            valid_action.append(1)
            is_search.append(1)
        elif action == "code":
            next_obs.append(OBS_TEMPLATE.format(program_results.pop(0).strip()))
            dones.append(0)
            valid_action.append(1)
            is_search.append(1)
        else:
            next_obs.append(INVALID_ACTION)
            dones.append(0)
            valid_action.append(0)
            is_search.append(0)
    # Inactive rows hold padding (Search-R1's _example_level_pad), so they
    # carry no tag and consume no result, as in the original.
    self.last_actions = cur_actions
    return next_obs, dones, valid_action, is_search


def row_question(manager, row):
    """The question of batch row `row`: manager.rlsearch_questions[row] when
    the caller set that list, else the question found in the row's prompt by
    the run_llm_loop wrapper, else ""."""
    for attr in ("rlsearch_questions", "_rlsearch_prompt_questions"):
        qs = getattr(manager, attr, None)
        if qs is not None and row < len(qs) and qs[row]:
            return str(qs[row])
    return ""


def _wrap_run_llm_loop(orig):
    def run_llm_loop(self, gen_batch, initial_input_ids, **kwargs):
        """Search-R1's run_llm_loop, after reading each row's question from
        its prompt (initial_input_ids, decoded without special tokens)."""
        try:
            prompts = self.tokenizer.batch_decode(initial_input_ids, skip_special_tokens=True)
            self._rlsearch_prompt_questions = [_util.question_from_prompt(p) for p in prompts]
        except Exception:  # noqa: BLE001 - a prompt that cannot be decoded leaves the question empty
            self._rlsearch_prompt_questions = None
        return orig(self, gen_batch, initial_input_ids, **kwargs)

    run_llm_loop._rlsearch_wrapped = orig
    return run_llm_loop


_PATCHED = ("_postprocess_responses", "postprocess_predictions", "execute_predictions", "run_llm_loop")


def install(manager_cls=None):
    """Patches manager_cls (default: search_r1.llm_agent.generation.LLMGenerationManager)
    and returns it. Idempotent; uninstall() restores the originals."""
    if manager_cls is None:
        from search_r1.llm_agent.generation import LLMGenerationManager as manager_cls  # noqa: N813
    if not hasattr(manager_cls, _ORIGINALS):
        setattr(manager_cls, _ORIGINALS, {n: manager_cls.__dict__.get(n) for n in _PATCHED})
    manager_cls._postprocess_responses = _postprocess_responses
    manager_cls.postprocess_predictions = postprocess_predictions
    manager_cls.execute_predictions = execute_predictions
    loop = getattr(manager_cls, "run_llm_loop", None)
    if loop is not None and not hasattr(loop, "_rlsearch_wrapped"):
        manager_cls.run_llm_loop = _wrap_run_llm_loop(loop)
    return manager_cls


def uninstall(manager_cls):
    """Restores what install() replaced."""
    orig = manager_cls.__dict__.get(_ORIGINALS)
    if not orig:
        return
    for name, fn in orig.items():
        if fn is None:
            if name in manager_cls.__dict__:
                delattr(manager_cls, name)
        else:
            setattr(manager_cls, name, fn)
    delattr(manager_cls, _ORIGINALS)


__all__ = ["install", "uninstall", "cut_response", "execute_predictions", "postprocess_predictions",
           "batch_programs", "row_question", "ACTION_PATTERN", "OBS_TEMPLATE", "INVALID_ACTION"]
