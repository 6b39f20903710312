"""The verl tool's own observation budget: cut at a passage boundary, with a marker.

verl's ToolAgentLoop cuts every tool response longer than
``actor_rollout_ref.rollout.multi_turn.max_tool_response_length`` characters
(default 256, verl/trainer/config/rollout/rollout.yaml) in the middle of a
passage (``tool_response_truncate_side``: keep both ends, "...(truncated)..."
between). A retrieval program's observation is up to 2,048 tokens (the
server's cap, sdk.DefaultMaxObservationTokens), so the tool keeps a budget of
its own and verl's is set to match (README): ``ObservationBudget.cut`` keeps
whole passages while they fit, then one marker line,

    [3 more documents not shown: the observation is limited to 2,048 tokens]

and the text never exceeds ``max_chars`` characters (marker included), so
with ``max_tool_response_length >= max_chars`` verl's cut never fires.

Passages are the lines the server renders per printed document
(sdk.DefaultDocFormat, ``Doc {index}(Title: ...) text``; PASSAGE_START). The
kept documents' ids are the first printed_ids, in print order: the RPL
reward credits only what the policy was shown.

Token budget: with ``tokenizer`` the budget is also ``max_tokens`` tokens of
that tokenizer (the policy's): a callable ``f(text) -> int``, an object with
``encode`` (a Hugging Face ``transformers`` tokenizer, or a ``tokenizers``
Tokenizer), or a string: a ``tokenizer.json`` path (loaded with
``tokenizers.Tokenizer.from_file``) or a model name / directory (loaded with
``transformers.AutoTokenizer.from_pretrained``), loaded on first use, once per
process. Without a tokenizer the server's token cap applies and this budget
is in characters only.
"""

import re
import threading

# Characters of one tool response (marker included). 16,384 leaves room for
# a full 2,048-token observation (the server's cap counts sdk.BoundTokens,
# at most 4 characters each for ASCII text: 8,192 characters, plus the error
# line) and for the policy tokenizer's longest tokens; README sets verl's
# max_tool_response_length to the same value.
DEFAULT_MAX_OBSERVATION_CHARS = 16384

# Tokens of the policy's tokenizer, when one is given: the server's
# observation cap (sdk.DefaultMaxObservationTokens; RPL caps printed
# evidence at 2,048 tokens).
DEFAULT_MAX_OBSERVATION_TOKENS = 2048

# A printed document starts a line with "Doc N(Title: " (sdk.DefaultDocFormat,
# Search-R1's _passages2string).
PASSAGE_START = re.compile(r"^Doc \d+\(Title: ", re.MULTILINE)

_tokenizers = {}
_tokenizers_lock = threading.Lock()


def _load_tokenizer(spec):
    with _tokenizers_lock:
        tok = _tokenizers.get(spec)
        if tok is None:
            if spec.endswith(".json"):
                from tokenizers import Tokenizer  # noqa: PLC0415 - optional dependency

                tok = Tokenizer.from_file(spec)
            else:
                from transformers import AutoTokenizer  # noqa: PLC0415 - optional dependency

                tok = AutoTokenizer.from_pretrained(spec)
            _tokenizers[spec] = tok
        return tok


def _counter(tok):
    if callable(tok) and not hasattr(tok, "encode"):
        return lambda text: int(tok(text))

    def count(text):
        try:
            ids = tok.encode(text, add_special_tokens=False)
        except TypeError:  # an encode without the keyword
            ids = tok.encode(text)
        return len(getattr(ids, "ids", ids))

    return count


def _group(n):
    return f"{n:,}"


class Cut:
    """The result of ObservationBudget.cut: text (what the policy is shown),
    printed_ids (the documents in it), docs_cut (documents left out) and
    cut (whether anything was left out)."""

    __slots__ = ("text", "printed_ids", "docs_cut", "cut")

    def __init__(self, text, printed_ids, docs_cut, cut):
        self.text, self.printed_ids, self.docs_cut, self.cut = text, printed_ids, docs_cut, cut


class ObservationBudget:
    """ObservationBudget(max_chars=16384, max_tokens=2048, tokenizer=None).

    max_chars: most characters of a cut observation (None: no limit);
    max_tokens: most tokens, counted with tokenizer (ignored without one).
    Values out of range raise ValueError naming the parameter. Safe for
    concurrent use once built (the tokenizer is loaded under a lock); it
    pickles and deep-copies without the loaded tokenizer when that was named
    by a string.
    """

    def __init__(self, max_chars=DEFAULT_MAX_OBSERVATION_CHARS, max_tokens=DEFAULT_MAX_OBSERVATION_TOKENS,
                 tokenizer=None):
        for name, v in (("max_observation_chars", max_chars), ("max_observation_tokens", max_tokens)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 64):
                raise ValueError(f"rlsearch observation budget: {name} must be an integer >= 64 or null, got {v!r}")
        if tokenizer is not None and not isinstance(tokenizer, str) and not callable(tokenizer) \
                and not hasattr(tokenizer, "encode"):
            raise ValueError(f"rlsearch observation budget: tokenizer must be a path, a model name, a tokenizer or "
                             f"a function, got {type(tokenizer).__name__}")
        self.max_chars = max_chars
        self.max_tokens = max_tokens if tokenizer is not None else None
        self.tokenizer = tokenizer
        self._count = None

    @classmethod
    def from_config(cls, cfg):
        """From a tool config / reward kwargs mapping: max_observation_chars,
        max_observation_tokens, tokenizer (defaults above)."""
        cfg = cfg or {}
        return cls(max_chars=cfg.get("max_observation_chars", DEFAULT_MAX_OBSERVATION_CHARS),
                   max_tokens=cfg.get("max_observation_tokens", DEFAULT_MAX_OBSERVATION_TOKENS),
                   tokenizer=cfg.get("tokenizer"))

    def key(self):
        """A hashable summary (for grouping calls with the same budget)."""
        tok = self.tokenizer if isinstance(self.tokenizer, str) or self.tokenizer is None else id(self.tokenizer)
        return (self.max_chars, self.max_tokens, tok)

    def __getstate__(self):
        st = self.__dict__.copy()
        st["_count"] = None
        return st

    def count_tokens(self, text):
        """Tokens of text with the budget's tokenizer (None without one)."""
        if self.tokenizer is None:
            return None
        if self._count is None:
            tok = _load_tokenizer(self.tokenizer) if isinstance(self.tokenizer, str) else self.tokenizer
            self._count = _counter(tok)
        return self._count(text)

    def _fits(self, text):
        if self.max_chars is not None and len(text) > self.max_chars:
            return False
        return self.max_tokens is None or self.count_tokens(text) <= self.max_tokens

    def _marker(self, docs_cut):
        limit = (f"{_group(self.max_tokens)} tokens" if self.max_tokens is not None
                 else f"{_group(self.max_chars)} characters")
        if docs_cut > 0:
            what = f"{docs_cut} more document{'s' if docs_cut != 1 else ''} not shown"
        else:
            what = "the rest of the output not shown"
        return f"[{what}: the observation is limited to {limit}]\n"

    def cut(self, text, printed_ids=()):
        """Cuts text (an observation as the server returns it) to the budget.

        Whole passages are kept from the start while the text, with the
        marker line, fits; text before the first passage stays with the
        first. When not even the first passage fits, it is cut at its last
        line break that fits (else at the character limit). Returns a Cut."""
        text = text or ""
        ids = list(printed_ids or ())
        if self._fits(text):
            return Cut(text, ids, 0, False)
        starts = [m.start() for m in PASSAGE_START.finditer(text)]
        bounds = [0] + [s for s in starts if s > 0] + [len(text)]
        segments = [text[a:b] for a, b in zip(bounds, bounds[1:])]
        docs_in = [bool(PASSAGE_START.match(seg)) for seg in segments]
        n_docs = sum(docs_in)
        # The longest prefix of whole segments that fits with its marker.
        kept = 0
        for k in range(len(segments) - 1, 0, -1):
            shown = sum(docs_in[:k])
            if self._fits("".join(segments[:k]) + self._marker(n_docs - shown)):
                kept = k
                break
        if kept > 0:
            shown = sum(docs_in[:kept])
            return Cut("".join(segments[:kept]) + self._marker(n_docs - shown), ids[:shown], n_docs - shown, True)
        # Not even the first segment fits: cut inside it, at a line break when there is one.
        marker = self._marker(max(n_docs - 1, 0) if docs_in[0] else n_docs)
        lo, hi = 0, len(segments[0])
        while lo < hi:  # the longest head that fits with the marker
            mid = (lo + hi + 1) // 2
            if self._fits(segments[0][:mid] + "\n" + marker):
                lo = mid
            else:
                hi = mid - 1
        head = segments[0][:lo]
        nl = head.rfind("\n")
        if nl > 0:
            head = head[:nl + 1]
        elif head:
            head += "\n"
        return Cut(head + marker, [], n_docs, True)
