"""Small helpers shared by the integrations (no third-party imports)."""

import re

# Search-R1 wraps retrieved evidence in these tags; rlsearch's mutation
# verifier uses the same wrapping (sdk.DefaultObservationTemplate).
_INFO_RE = re.compile(r"<information>(.*?)</information>", re.DOTALL)
_CODE_RE = re.compile(r"<code>(.*?)</code>", re.DOTALL)


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
