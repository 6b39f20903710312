#!/usr/bin/env python3
"""Rollout dumps -> D_mut records through rlsearch's POST /v1/programs/mutate.

    python3 integrations/mutate_rollouts.py --url http://127.0.0.1:8000 --in rollouts.jsonl --out dmut.jsonl
    python3 integrations/mutate_rollouts.py ... --proposals-out contexts.jsonl     # step 1 only: contexts to regenerate from
    python3 integrations/mutate_rollouts.py ... --continuations regenerated.jsonl  # step 2 with the policy's continuations

Input lines (JSONL; one rollout each) in any of these shapes:
- rlsearch trajectories: {"id", "question", "golden_answers", "gold_ids" | "gold_passage_ids", "turns": [{"role", "text"}]};
- flat text as Search-R1 / verl's search loops write it: {"id", "question", "golden_answers", "gold_ids",
  "prompt", "response"} (observations are the <information>...</information> blocks of the response);
- verl's rollout dump (trainer.rollout_data_dir): {"input", "output", "gts"};
- chat messages: {"messages": [{"role": "system"|"user"|"assistant"|"tool", "content", "tool_calls"}]}, where a
  retrieval_program tool call's "code" argument becomes a <code> block of the assistant turn.
Gold support ids may sit at the top level, in "extra_info" or in "ground_truth" / "reward_model.ground_truth", or
come from --gold (a questions JSONL such as wiki_multihop/questions.jsonl, joined by id, then by question text, then
by the question text appearing in the prompt).

Step 1 (always): the last <code> program of each rollout is mutated and the verified mutations come back with their
continuation contexts. Step 2 builds the records (x, p', y') with supervision spans from a continuation y':
--continuations gives the policy's regenerated ones (lines {"rollout_id", "program", "continuation"}, e.g. the
--proposals-out lines with "continuation" added); without it the rollout's own text after the mutated program's
observation is reused (an offline approximation: the answer span is still supervised only when correct).

Output: one record per line, {"rollout_id", "record": {...}} (sdk.Record: text, spans, program, source, distance,
printed_ids, answer, correct), written atomically (temporary file, then rename). Progress and a summary go to
stderr. Exit status 1 on bad input (naming the line) or when the server is unreachable after its retries.
"""

import argparse
import json
import os
import re
import sys
import tempfile
import time

if __package__ in (None, ""):  # run as a script: make `integrations` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from integrations import _util  # noqa: E402
from integrations.client import Client, ServiceError  # noqa: E402

_ROLE = {"system": "prompt", "user": "prompt", "prompt": "prompt", "assistant": "model", "model": "model",
         "policy": "model", "tool": "observation", "observation": "observation", "environment": "observation"}


class InputError(ValueError):
    """A rollout line that cannot be read; the message names the line."""


def _norm_q(s):
    return re.sub(r"\s+", " ", (s or "").strip().lower())


class Gold:
    """Gold support from a questions JSONL: by id, by question, by containment."""

    def __init__(self, path=None):
        self.by_id, self.by_q, self.items = {}, {}, []
        if not path:
            return
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    q = json.loads(line)
                except ValueError as e:
                    raise InputError(f"{path}:{n}: not JSON: {e}") from None
                ids = _util.as_list(_util.first(q, "gold_ids", "gold_passage_ids"))
                entry = {"question": q.get("question", ""), "golden_answers": _util.as_list(q.get("golden_answers")),
                         "gold_ids": ids}
                if q.get("id") is not None:
                    self.by_id[str(q["id"])] = entry
                if entry["question"]:
                    self.by_q[_norm_q(entry["question"])] = entry
                    self.items.append((entry["question"], entry))
        self.items.sort(key=lambda x: -len(x[0]))  # longest question first: the most specific match

    def find(self, rid, question, prompt):
        if rid is not None and str(rid) in self.by_id:
            return self.by_id[str(rid)]
        if question and _norm_q(question) in self.by_q:
            return self.by_q[_norm_q(question)]
        if prompt:
            for q, e in self.items:
                if q in prompt:
                    return e
        return None


def _messages_to_turns(msgs, where):
    turns = []
    for j, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") not in _ROLE:
            raise InputError(f"{where}: messages[{j}] needs a role in {sorted(_ROLE)}")
        content = m.get("content") or ""
        if isinstance(content, list):  # multimodal content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        role = _ROLE[m["role"]]
        if role == "model":
            for call in m.get("tool_calls") or []:
                fn = (call or {}).get("function") or {}
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        args = {}
                if isinstance(args, dict) and isinstance(args.get("code"), str):
                    content += "<code>\n" + args["code"].strip("\n") + "\n</code>"
        if role == "observation" and "<information>" not in content:
            content = "\n<information>\n" + content + "</information>\n"
        turns.append({"role": role, "text": content})
    return turns


def to_trajectory(obj, n, gold):
    """Returns the rlsearch trajectory of one input line (see the module doc)."""
    where = f"line {n}"
    if not isinstance(obj, dict):
        raise InputError(f"{where}: want a JSON object, got {type(obj).__name__}")
    extra = obj.get("extra_info") if isinstance(obj.get("extra_info"), dict) else {}
    gt = obj.get("ground_truth")
    if gt is None and isinstance(obj.get("reward_model"), dict):
        gt = obj["reward_model"].get("ground_truth")
    if gt is None:
        gt = obj.get("gts")
    rid = _util.first(obj, "id", "uid", "index")
    if rid is None:
        rid = _util.first(extra, "id", "index")
    question = _util.first(obj, "question") or _util.first(extra, "question") or ""
    if "turns" in obj:
        turns = obj["turns"]
        if not isinstance(turns, list):
            raise InputError(f"{where}: turns must be a list")
        prompt = "".join(t.get("text", "") for t in turns if isinstance(t, dict) and _ROLE.get(t.get("role")) == "prompt")
    elif "messages" in obj:
        if not isinstance(obj["messages"], list):
            raise InputError(f"{where}: messages must be a list")
        turns = _messages_to_turns(obj["messages"], where)
        prompt = "".join(t["text"] for t in turns if t["role"] == "prompt")
    else:
        prompt = _util.first(obj, "prompt", "input") or ""
        resp = _util.first(obj, "response", "output", "solution_str")
        if not isinstance(resp, str) or not isinstance(prompt, str):
            raise InputError(f"{where}: needs turns, messages, or a response/output string")
        turns = _util.split_turns(resp, prompt)
    answers = _util.as_list(_util.first(obj, "golden_answers") or
                            (_util.first(gt, "target", "golden_answers") if isinstance(gt, dict) else gt))
    ids = _util.as_list(_util.first(obj, "gold_ids", "gold_passage_ids") or _util.first(extra, "gold_ids", "gold_passage_ids")
                        or (_util.first(gt, "gold_ids", "gold_passage_ids") if isinstance(gt, dict) else None))
    g = gold.find(rid, question, prompt)
    if g is not None:
        question = question or g["question"]
        answers = answers or g["golden_answers"]
        ids = ids or g["gold_ids"]
    if not ids:
        raise InputError(f"{where}: no gold support ids (gold_ids / gold_passage_ids, or --gold FILE)")
    return {"id": str(rid) if rid is not None else f"line-{n}", "question": question, "golden_answers": answers,
            "gold_ids": ids, "turns": turns}


def reuse_continuation(traj, turn):
    """The rollout's text after the observation that followed model turn
    `turn` (the mutated program's), or "" when there is none."""
    ts = traj["turns"]
    j = turn + 1
    while j < len(ts) and _ROLE.get(ts[j]["role"]) != "observation":
        j += 1
    return "".join(t["text"] for t in ts[j + 1:])


class Progress:
    """Progress on stderr: a rewritten line on a terminal, else a line every 10 %."""

    def __init__(self, total, label, stream=None):
        stream = stream or sys.stderr
        self.total, self.label, self.stream, self.done = total, label, stream, 0
        self.t0, self.tty, self.next_pct = time.monotonic(), stream.isatty(), 10

    def add(self, k, note=""):
        self.done += k
        rate = self.done / max(time.monotonic() - self.t0, 1e-9)
        msg = f"{self.label}: {self.done}/{self.total} ({rate:.1f}/s){note}"
        pct = 100 * self.done // max(self.total, 1)
        if self.tty:
            self.stream.write("\r" + msg)
            if self.done >= self.total:
                self.stream.write("\n")
        elif pct >= self.next_pct or self.done >= self.total:
            self.stream.write(msg + "\n")
            self.next_pct = pct // 10 * 10 + 10
        self.stream.flush()


def write_jsonl_atomic(path, rows):
    """Writes rows as JSONL to path atomically (a temporary file in the same
    directory, fsynced, then renamed over path)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except ValueError as e:
                    raise InputError(f"{path}:{n}: not JSON: {e}") from None


def run(args, client, stderr=None):
    """Runs the script's work with parsed args; returns the summary dict."""
    stderr = stderr or sys.stderr
    gold = Gold(args.gold)
    trajs = [to_trajectory(obj, n, gold) for n, obj in read_jsonl(args.input)]
    by_id = {t["id"]: t for t in trajs}
    opts = {k: v for k, v in (("executions", args.executions), ("min_gold", args.min_gold)) if v}
    summary = {"rollouts": len(trajs), "verified": 0, "no_verified_mutation": 0, "not_mutable": 0,
               "skipped_no_gold": 0, "errors": 0, "records": 0, "record_errors": 0}
    requests_ = []  # (rollout id, record request)
    if args.continuations:
        for n, c in read_jsonl(args.continuations):
            rid = str(c.get("rollout_id", ""))
            if rid not in by_id or not isinstance(c.get("program"), dict) or not isinstance(c.get("continuation"), str):
                raise InputError(f"{args.continuations}:{n}: needs rollout_id (one of the input's ids), program, continuation")
            requests_.append((rid, {"trajectory": by_id[rid], "program": c["program"], "continuation": c["continuation"]}))
    else:
        prog = Progress(len(trajs), "propose", stderr)
        contexts = []
        for i in range(0, len(trajs), args.batch):
            chunk = trajs[i:i + args.batch]
            props = client.mutate(trajectories=chunk, **opts)
            for t, p in zip(chunk, props):
                status = p.get("status") or ("error" if p.get("error") else "")
                if status == "skipped_no_gold":  # no gold ids: nothing to verify against (sdk.StatusSkippedNoGold)
                    summary["skipped_no_gold"] += 1
                    continue
                if p.get("error"):
                    summary["errors"] += 1
                    print(f"mutate: rollout {t['id']}: {p['error']}", file=stderr)
                    continue
                summary[status] = summary.get(status, 0) + 1
                for k, (v, ctx) in enumerate(zip(p.get("verified") or [], p.get("contexts") or [])):
                    if k >= args.max_per_rollout:
                        break
                    contexts.append({"rollout_id": t["id"], "index": k, "program": v["program"], "source": v["source"],
                                     "distance": v.get("distance"), "context": ctx})
                    requests_.append((t["id"], {"trajectory": t, "program": v["program"],
                                                "continuation": reuse_continuation(t, p["turn"])}))
            prog.add(len(chunk), f", verified {summary['verified']}")
        if args.proposals_out:
            write_jsonl_atomic(args.proposals_out, contexts)
            print(f"mutate: wrote {len(contexts)} contexts to {args.proposals_out}", file=stderr)
            if not args.out:
                print("mutate: " + json.dumps(summary), file=stderr)
                return summary
    rows = []
    if requests_:
        prog = Progress(len(requests_), "records", stderr)
        for i in range(0, len(requests_), args.batch):
            chunk = requests_[i:i + args.batch]
            res = client.mutate(records=[r for _, r in chunk], **opts)
            for (rid, _), r in zip(chunk, res):
                if r.get("record"):
                    rows.append({"rollout_id": rid, "record": r["record"]})
                else:
                    summary["record_errors"] += 1
                    print(f"mutate: record for {rid}: {r.get('error')}", file=stderr)
            prog.add(len(chunk))
    summary["records"] = len(rows)
    write_jsonl_atomic(args.out, rows)
    print("mutate: " + json.dumps(summary), file=stderr)
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description="rollout dumps -> D_mut records via rlsearch /v1/programs/mutate")
    ap.add_argument("--url", default=os.environ.get("RLSEARCH_URL", "http://127.0.0.1:8000"), help="rlsearch server")
    ap.add_argument("--in", dest="input", required=True, help="rollouts JSONL")
    ap.add_argument("--out", help="D_mut records JSONL (written atomically)")
    ap.add_argument("--gold", help="questions JSONL with gold_passage_ids, joined to rollouts without gold")
    ap.add_argument("--proposals-out", help="also write the verified mutations' contexts (one line each) here")
    ap.add_argument("--continuations", help="JSONL {rollout_id, program, continuation}: build records from these")
    ap.add_argument("--max-per-rollout", type=int, default=1, help="records per rollout (first verified mutations)")
    ap.add_argument("--batch", type=int, default=64, help="rollouts per request (at most 4096)")
    ap.add_argument("--executions", type=int, default=0, help="mutation budget per rollout (server default 64, max 256)")
    ap.add_argument("--min-gold", type=int, default=0, help="gold passages V_ret needs (server default: all)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    ap.add_argument("--max-retries", type=int, default=5, help="retries on connection errors, 429 and 5xx")
    args = ap.parse_args(argv)
    if not args.out and not args.proposals_out:
        ap.error("give --out, --proposals-out, or both")
    if args.continuations and not args.out:
        ap.error("--continuations needs --out")
    if args.continuations and args.proposals_out:
        ap.error("--continuations builds records from given programs: --proposals-out does not apply")
    if not 1 <= args.batch <= 4096:
        ap.error(f"--batch {args.batch}: want 1..4096")
    if args.max_per_rollout < 1:
        ap.error(f"--max-per-rollout {args.max_per_rollout}: want >= 1")
    try:
        client = Client(args.url, timeout=args.timeout, max_retries=args.max_retries)
        run(args, client)
    except (InputError, ServiceError, ValueError, OSError) as e:
        print(f"mutate: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
