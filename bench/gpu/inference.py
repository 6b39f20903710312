#!/usr/bin/env python3
"""PyTorch side of the GPU inference check (bench/gpu/inference.sh).

  inference.py build --work DIR [--seed 1]
      On the GPU: randomly initialised Hugging Face BertModel (bert-base /
      e5-base shape) and Qwen3ForCausalLM (Qwen3-0.6B shape), fixed seed,
      float32, saved with save_pretrained (config.json + safetensors) into
      DIR/bert and DIR/qwen06; mixed-length token ids (DIR/parity_inputs.json)
      and PyTorch fp32 outputs, one sequence at a time with TF32 off and
      eager attention (DIR/torch_ref.json): E5 mean-pooled L2-normalised
      embeddings, the Qwen3 LM-head logits of "no" (2152) and "yes" (9693)
      at the last position.
  inference.py time --out FILE [--models e5,qwen0.6b,qwen4b] [--deadline S]
      PyTorch fp16 timings, torch.inference_mode, SDPA attention, eager for
      every workload, then torch.compile (dynamic=False) in priority order
      while the deadline (seconds from start) leaves room. The same
      workloads and end points as transformer's TestDeviceTiming: E5-base
      512×32 queries, 128×256 passages, 1×32; Qwen3-Reranker 0.6B and 4B
      shapes, 256 pairs × 512 tokens (logits_to_keep=1, the two rows, P(yes)
      copied to the host). Random weights built on the GPU (the values do
      not change the speed).
  inference.py export --work DIR [--deadline S]
      ONNX exports of build's models for ONNX Runtime's CUDA provider
      (torch.onnx.export on the GPU, opset 17, dynamic batch and sequence):
      DIR/e5-onnx-fp16 and DIR/e5-onnx-fp32 (BertModel → last_hidden_state),
      DIR/qwen06-onnx-fp16 (Qwen3ForCausalLM → the last position's logits
      [batch, vocab], inputs input_ids, attention_mask, position_ids), and
      while the deadline allows DIR/qwen4b-onnx-fp16 (random weights of the
      4B shape, external data). Each directory gets the rlsearch.json and
      tokenizer.json the serving code needs; DIR/export.json says what was
      exported and what failed or was skipped (and why).
  inference.py dryrun-build --work DIR
      Without torch: the same files from scripts/gen_bert.py and
      gen_qwen3.py tiny models (safetensors, Hugging Face layout) and their
      float64 numpy references, for inference.sh DRY_RUN=1 on a CPU machine;
      their ONNX graphs stand in for export's (DIR/e5-onnx-fp32,
      DIR/e5-onnx-fp16 with a float16 output, DIR/qwen06-onnx-fp16).
  inference.py summary --work DIR --log LOG --out FILE.md
      The report bench/gpu/results/DATE-h200-inference.md.

torch and transformers are imported inside the functions that need them, so
that `python3 -m py_compile` and the dry run work where they are absent.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

NO_ID, YES_ID = 2152, 9693  # Qwen3 tokenizer ids of "no" and "yes" (rerank checks them)
CLS_ID, SEP_ID = 101, 102  # bert-base-uncased [CLS], [SEP]

# Shapes: bert-base-uncased / intfloat/e5-base-v2 config.json; Qwen/Qwen3-0.6B
# and Qwen/Qwen3-4B config.json (the bases of Qwen3-Reranker-0.6B and -4B).
BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12,
                 hidden_act="gelu")
QWEN_06B = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True, attention_bias=False,
                use_sliding_window=False)
QWEN_4B = dict(QWEN_06B, hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32)

BERT_LENS = [2, 7, 32, 100, 256, 512]
QWEN_LENS = [1, 17, 200, 512, 1500]


def log(*a):
    print("[inference.py %.1fs]" % (time.time() - T0), *a, file=sys.stderr, flush=True)


T0 = time.time()


def parity_inputs(bert_lens, qwen_lens, bert_vocab, qwen_vocab, seed):
    r = random.Random(seed)
    bert = []
    for n in bert_lens:
        ids = [r.randrange(1000, bert_vocab) for _ in range(n)]
        ids[0], ids[-1] = CLS_ID, SEP_ID
        bert.append(ids)
    qwen = [[r.randrange(0, qwen_vocab) for _ in range(n)] for n in qwen_lens]
    return {"bert": {"ids": bert}, "qwen": {"ids": qwen, "rows": [NO_ID, YES_ID]}}


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
        f.write("\n")


def hf_config(cls, kw, attn):
    """cls(**kw) with the attention implementation set, across transformers 4.x and 5.x."""
    try:
        c = cls(**kw, attn_implementation=attn)
    except TypeError:
        c = cls(**kw)
    try:
        c._attn_implementation = attn
    except Exception:  # noqa: BLE001 (property in some versions)
        pass
    return c


def cmd_build(a):
    import torch
    from transformers import BertConfig, BertModel, Qwen3Config, Qwen3ForCausalLM

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.work, exist_ok=True)
    inputs = parity_inputs(BERT_LENS, QWEN_LENS, BERT_BASE["vocab_size"], QWEN_06B["vocab_size"], a.seed)
    write_json(os.path.join(a.work, "parity_inputs.json"), inputs)
    ref = {}

    torch.manual_seed(a.seed)
    with torch.device("cuda"):
        bert = BertModel(hf_config(BertConfig, BERT_BASE, "eager"), add_pooling_layer=False).float().eval()
    bert.save_pretrained(os.path.join(a.work, "bert"))
    log("bert saved", os.listdir(os.path.join(a.work, "bert")))
    embs = []
    with torch.inference_mode():
        for ids in inputs["bert"]["ids"]:
            x = torch.tensor([ids], device="cuda")
            h = bert(input_ids=x, attention_mask=torch.ones_like(x), token_type_ids=torch.zeros_like(x)).last_hidden_state[0]
            e = h.double().mean(0)
            embs.append((e / e.norm()).tolist())
    ref["bert"] = {"embeddings": embs}
    del bert
    torch.cuda.empty_cache()

    torch.manual_seed(a.seed + 1)
    with torch.device("cuda"):
        qwen = Qwen3ForCausalLM(hf_config(Qwen3Config, QWEN_06B, "eager")).float().eval()
    qwen.save_pretrained(os.path.join(a.work, "qwen06"))
    log("qwen06 saved", os.listdir(os.path.join(a.work, "qwen06")))
    logits = []
    rows = inputs["qwen"]["rows"]
    with torch.inference_mode():
        for ids in inputs["qwen"]["ids"]:
            x = torch.tensor([ids], device="cuda")
            try:
                out = qwen(input_ids=x, use_cache=False, logits_to_keep=1).logits
            except TypeError:  # transformers < 4.45
                out = qwen(input_ids=x, use_cache=False).logits
            logits.append([float(v) for v in out[0, -1, rows].double()])
    ref["qwen"] = {"logits": logits}
    write_json(os.path.join(a.work, "torch_ref.json"), ref)
    log("torch fp32 references written; P(yes):",
        ["%.4f" % (1 / (1 + pow(2.718281828459045, n - y))) for n, y in logits])


def model_dir_files(out, kind, tokenizer, inputs, max_length, name):
    """rlsearch.json and tokenizer.json for an exported ONNX model directory."""
    import shutil
    shutil.copyfile(tokenizer, os.path.join(out, "tokenizer.json"))
    if kind == "e5":
        cfg = {"name": name, "dim": 768, "max_length": max_length, "query_prefix": "query: ", "passage_prefix": "passage: ",
               "pooling": "mean", "inputs": inputs, "output": "last_hidden_state"}
    else:
        cfg = {"kind": "qwen3-reranker", "name": name, "inputs": inputs, "output": "logits", "max_length": max_length}
    write_json(os.path.join(out, "rlsearch.json"), cfg)


def cmd_export(a):
    import torch
    from transformers import BertModel, Qwen3Config, Qwen3ForCausalLM

    deadline = T0 + a.deadline
    report = {}
    rpath = os.path.join(a.work, "export.json")

    def done(key, **kw):
        report[key] = kw
        write_json(rpath, report)  # after every model: a timeout keeps what was exported
        log("export", key, kw)

    def export(key, module, args, names, outputs, dyn, out_dir, kind, tok, max_length, est):
        left = deadline - time.time()
        if left < est:
            return done(key, skipped="time budget (%.0f s left, ~%d s needed)" % (left, est))
        t0 = time.time()
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, "model.onnx")
        errs = []
        for dynamo in (False, True):  # the TorchScript exporter first (no onnxscript needed), then dynamo
            try:
                with torch.inference_mode():
                    kw = dict(input_names=names, output_names=outputs, opset_version=17, dynamic_axes=dyn, dynamo=dynamo)
                    if dynamo:
                        kw["external_data"] = True
                    torch.onnx.export(module, args, path, **kw)
                break
            except Exception as e:  # noqa: BLE001 (reported, then the other exporter)
                errs.append("%s exporter: %s" % ("dynamo" if dynamo else "torchscript", str(e).splitlines()[0][:300]))
        else:
            return done(key, error="; ".join(errs))
        model_dir_files(out_dir, kind, tok, names, max_length, key + " (random weights, inference.py export)")
        size = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
        done(key, dir=out_dir, seconds=time.time() - t0, bytes=size, exporter_errors=errs)

    class E5(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    class QwenLast(torch.nn.Module):
        """Qwen3ForCausalLM's logits at the last position (the reranker reads the yes/no rows)."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, position_ids):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
            return out.logits[:, -1, :]

    def load(cls, path, dtype):
        try:  # transformers 5 names it dtype, 4.x torch_dtype
            return cls.from_pretrained(path, attn_implementation="eager", dtype=dtype)
        except TypeError:
            return cls.from_pretrained(path, attn_implementation="eager", torch_dtype=dtype)

    bert_tok, qwen_tok = a.bert_tokenizer, a.qwen_tokenizer
    x = torch.randint(1000, 30000, (2, 16), device="cuda")
    e5_args = (x, torch.ones_like(x), torch.zeros_like(x))
    e5_names = ["input_ids", "attention_mask", "token_type_ids"]
    e5_dyn = {n: {0: "batch", 1: "sequence"} for n in e5_names}
    e5_dyn["last_hidden_state"] = {0: "batch", 1: "sequence"}
    for dtype, key in ((torch.float16, "e5-onnx-fp16"), (torch.float32, "e5-onnx-fp32")):
        bert = load(BertModel, os.path.join(a.work, "bert"), dtype).cuda().eval()
        export(key, E5(bert), e5_args, e5_names, ["last_hidden_state"], e5_dyn, os.path.join(a.work, key), "e5", bert_tok, 512, 15)
        del bert
        torch.cuda.empty_cache()
    q_names = ["input_ids", "attention_mask", "position_ids"]
    q_dyn = {n: {0: "batch", 1: "sequence"} for n in q_names}
    q_dyn["logits"] = {0: "batch"}
    x = torch.randint(1000, 150000, (2, 16), device="cuda")
    q_args = (x, torch.ones_like(x), torch.arange(16, device="cuda").expand(2, 16).contiguous())
    for key, src, est in (("qwen06-onnx-fp16", "qwen06", 30), ("qwen4b-onnx-fp16", None, 120)):
        if deadline - time.time() < est:
            done(key, skipped="time budget (%.0f s left, ~%d s needed)" % (deadline - time.time(), est))
            continue
        if src:
            m = load(Qwen3ForCausalLM, os.path.join(a.work, src), torch.float16)
        else:
            torch.manual_seed(a.seed + 2)
            torch.set_default_dtype(torch.float16)
            try:
                with torch.device("cuda"):
                    m = Qwen3ForCausalLM(hf_config(Qwen3Config, QWEN_4B, "eager"))
            finally:
                torch.set_default_dtype(torch.float32)
        m = m.cuda().eval()
        export(key, QwenLast(m), q_args, q_names, ["logits"], q_dyn, os.path.join(a.work, key), "qwen3", qwen_tok, 8192, est)
        del m
        torch.cuda.empty_cache()


def cmd_dryrun_build(a):
    """The build step's files from the tiny generated models (no torch)."""
    import shutil
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", ".."))
    py = "/usr/bin/python3"
    os.makedirs(a.work, exist_ok=True)
    tok = os.path.join(root, ".cache", "tokenizers")
    export = {}
    for script, sub, extra, onnx_dirs in (
            ("gen_bert.py", "bert", ["--preset", "tiny", "--tokenizer", os.path.join(tok, "bert-uncased.json")], ["e5-onnx-fp32"]),
            ("gen_qwen3.py", "qwen06", ["--variant", "last", "--tokenizer", os.path.join(tok, "qwen3.json")], [])):
        out = os.path.join(a.work, sub)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([py, os.path.join(root, "scripts", script), "gen", "--seed", "1", "--safetensors", "f32",
                        "--out", out] + extra, check=True)
        for d in onnx_dirs:  # export's stand-in: the same model as an ONNX directory
            shutil.rmtree(os.path.join(a.work, d), ignore_errors=True)
            shutil.copytree(out, os.path.join(a.work, d))
            export[d] = {"dir": os.path.join(a.work, d), "seconds": 0, "dry": "gen_bert.py's graph"}
        os.remove(os.path.join(out, "model.onnx"))  # the GPU path must read the safetensors, as on the device
    for script, d, extra in (("gen_bert.py", "e5-onnx-fp16", ["--preset", "tiny", "--tokenizer", os.path.join(tok, "bert-uncased.json")]),
                             ("gen_qwen3.py", "qwen06-onnx-fp16", ["--variant", "last", "--tokenizer", os.path.join(tok, "qwen3.json")])):
        out = os.path.join(a.work, d)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([py, os.path.join(root, "scripts", script), "gen", "--seed", "1", "--output-dtype", "f16", "--out", out] + extra, check=True)
        export[d] = {"dir": out, "seconds": 0, "dry": script + " --output-dtype f16"}
    export["qwen4b-onnx-fp16"] = {"skipped": "dry run"}
    write_json(os.path.join(a.work, "export.json"), export)
    inputs = parity_inputs([2, 7, 33], [1, 9, 40], 30522, 151669, 1)
    write_json(os.path.join(a.work, "parity_inputs.json"), inputs)

    def reference(script, model, req):
        p = subprocess.run([py, os.path.join(root, "scripts", script), "reference", "--model", model],
                           input=json.dumps(req).encode(), capture_output=True, check=True)
        return json.loads(p.stdout)

    bert = reference("gen_bert.py", os.path.join(a.work, "bert"), {"input_ids": inputs["bert"]["ids"]})
    qwen = reference("gen_qwen3.py", os.path.join(a.work, "qwen06"),
                     {"input_ids": inputs["qwen"]["ids"], "token_ids": inputs["qwen"]["rows"]})
    write_json(os.path.join(a.work, "torch_ref.json"),
               {"bert": {"embeddings": bert["embeddings"]}, "qwen": {"logits": qwen["logits"]}})
    log("dry-run models and numpy references written to", a.work)


def time_calls(fn, warm, iters, budget_s):
    import torch

    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts, start = [], time.perf_counter()
    while len(ts) < iters or time.perf_counter() - start < budget_s:
        t0 = time.perf_counter()
        fn()  # ends with a copy to the host, which synchronises
        ts.append((time.perf_counter() - t0) * 1000)
        if len(ts) >= 200:
            break
    ts.sort()
    return ts


def cmd_time(a):
    import torch
    import torch.nn.functional as F
    from transformers import BertConfig, BertModel, Qwen3Config, Qwen3ForCausalLM

    deadline = T0 + a.deadline
    models = a.models.split(",")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(42)

    def ids(n, seq, vocab):
        return torch.randint(1000, vocab, (n, seq), device="cuda", generator=gen)

    def record(impl_mode, model, workload, n, seq, ts, extra=None):
        med = ts[len(ts) // 2]
        row = {"impl": "torch", "mode": impl_mode, "model": model, "workload": workload, "batch": n, "seq": seq,
               "items_per_s": n / med * 1000, "median_ms": med, "p90_ms": ts[len(ts) * 9 // 10], "iters": len(ts)}
        row.update(extra or {})
        rows.append(row)
        log("%s %s %s %d×%d: %.0f/s, median %.2f ms" % (impl_mode, model, workload, n, seq, row["items_per_s"], med))
        with open(a.out, "w") as f:  # after every row: a timeout keeps what was measured
            json.dump(rows, f, indent=1)

    def build(kind):
        torch.manual_seed(7)
        torch.set_default_dtype(torch.float16)
        try:
            with torch.device("cuda"):
                if kind == "e5":
                    return BertModel(hf_config(BertConfig, BERT_BASE, "sdpa"), add_pooling_layer=False).eval()
                shape = QWEN_06B if kind == "qwen0.6b" else QWEN_4B
                return Qwen3ForCausalLM(hf_config(Qwen3Config, shape, "sdpa")).eval()
        finally:
            torch.set_default_dtype(torch.float32)

    def e5_fn(m, x):
        def f():
            h = m(input_ids=x).last_hidden_state  # no padding: every token attends
            return F.normalize(h.float().mean(1), dim=-1).cpu()
        return f

    def qwen_fn(m, x):
        def f():
            lg = m(input_ids=x, use_cache=False, logits_to_keep=1).logits[:, -1, [NO_ID, YES_ID]].float()
            return torch.softmax(lg, -1)[:, 1].cpu()
        return f

    e5_work = [("queries", 512, 32), ("passages", 128, 256), ("one query", 1, 32)]
    compile_plan = []  # (kind, model, name, n, seq, fn factory, estimated compile seconds)
    with torch.inference_mode():
        for kind in models:
            m = build(kind)
            if kind == "e5":
                for name, n, seq in e5_work:
                    record("fp16 eager", "e5-base", name, n, seq, time_calls(e5_fn(m, ids(n, seq, 30522)), 3, 10, 2.0))
                compile_plan += [("e5", "e5-base", "queries", 512, 32, e5_fn, 60), ("e5", "e5-base", "passages", 128, 256, e5_fn, 45)]
            else:
                name = "qwen3-reranker-" + kind[len("qwen"):]
                warm, iters = (2, 5) if kind == "qwen0.6b" else (1, 3)
                record("fp16 eager", name, "pairs", 256, 512, time_calls(qwen_fn(m, ids(256, 512, 151936)), warm, iters, 3.0))
                compile_plan.append((kind, name, "pairs", 256, 512, qwen_fn, 90 if kind == "qwen0.6b" else 120))
            del m
            torch.cuda.empty_cache()
        if not a.compile:
            return
        cur_kind, m, cm = None, None, None
        for kind, model, name, n, seq, factory, est in compile_plan:
            left = deadline - time.time()
            if left < est:
                log("torch.compile %s %s skipped: %.0f s left, about %d s needed" % (model, name, left, est))
                rows.append({"impl": "torch", "mode": "fp16 compiled", "model": model, "workload": name, "batch": n, "seq": seq,
                             "skipped": "time budget (%.0f s left, ~%d s to compile)" % (left, est)})
                with open(a.out, "w") as f:
                    json.dump(rows, f, indent=1)
                continue
            if kind != cur_kind:
                del m, cm
                torch.cuda.empty_cache()
                m = build(kind)
                cm = torch.compile(m, dynamic=False)
                cur_kind = kind
            x = ids(n, seq, 30522 if kind == "e5" else 151936)
            fn = factory(cm, x)
            t0 = time.time()
            fn()  # compiles
            compile_s = time.time() - t0
            record("fp16 compiled", model, name, n, seq, time_calls(fn, 2, 3 if kind == "qwen4b" else 5, 2.0), {"compile_s": compile_s})


def read_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def e2e_section(path):
    """The /retrieve end-to-end lines of the report, from gpubench's e2e.jsonl."""
    out = ["", "## /retrieve end to end: E5 on the GPU, then GPU top-k (goal ≥ 5,000 queries/s at batch 512, 21M × 768)", ""]
    rows = []
    try:
        with open(path) as f:
            rows = [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError) as e:
        return out + ["Not measured: %s (see e2e-log.txt)." % e]
    errs = [r for r in rows if "error" in r]
    r = next((r for r in rows if r.get("op") == "e2e" and "error" not in r), None)
    if not r:
        return out + ["Not measured: %s (see e2e-log.txt)." % ("; ".join("%s: %s" % (e.get("op"), e["error"]) for e in errs) or "no e2e answer")]
    d, hb, hs = r["direct"], r["http_batch"], r["http_single"]
    # The goal is judged on POST /retrieve (requests of 512 queries): the server's JSON decoding, dedup, document
    # fetch and encoding included; the in-process row shows how much of it is encode and search.
    goal = "✓" if r["batch"] >= 512 and r["n"] >= 21_000_000 and hb["qps"] >= 5000 else "✗"
    out.append("Encoder: %s (%s); index: %s × %d, top-%d; queries of exactly %d tokens (prefix and [CLS]/[SEP] included), "
               "%d distinct texts; median of %d batches after two warm-ups. Encoder open (weights loaded, probe run): %.1f s." % (
                   r["encoder_device"], r["encoder_placement"], "{:,}".format(r["n"]), r["dim"], r["topk"], r["tokens_per_query"],
                   4096, d["reps"], r["open_s"]))
    out.append("")
    out.append("| path | queries per call | encode ms | search ms | encode + search ms | queries/s | p50 ms | p99 ms | goal |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    out.append("| retriever (index.NewDenseRetriever), in process | %d | %.2f | %.2f | %.2f | %.0f | | | |" % (
        r["batch"], d["encode_ms"], d["search_ms"], d["retrieve_ms"], d["qps"]))
    out.append("| POST /retrieve, %d queries per request, concurrency %d | %d | | | | %.0f | %.2f | %.2f | %s |" % (
        hb["queries_per_request"], hb["concurrency"], hb["queries_per_request"], hb["qps"], hb["p50_ms"], hb["p99_ms"], goal))
    out.append("| POST /retrieve, 1 query per request, concurrency %d, batching queue ≤ %d | 1 | | | | %.0f | %.2f | %.2f | |" % (
        hs["concurrency"], hs["batcher_max"], hs["rps"], hs["p50_ms"], hs["p99_ms"]))
    out.append("")
    out.append("p50/p99 are per request (closed loop, %.0f s after a 1 s warm-up; %d and %d requests)." % (
        hb["seconds"], hb["requests"], hs["requests"]))
    return out


def read_jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except (OSError, ValueError):
        return []


def ort_section(answers, export):
    """ONNX Runtime's CUDA provider and the model canary, from gpubench's model answers (ort.jsonl)."""
    out = ["", "## The models through the serving code: our fp16 forward (gpu) and ONNX Runtime's CUDA provider (cuda)", ""]
    if export:
        out.append("Exports (inference.py export): " + "; ".join(
            "%s: %s" % (k, ("%.0f s, %.1f GB" % (v["seconds"], v.get("bytes", 0) / 1e9)) if "dir" in v else (v.get("skipped") or "**failed**: " + v.get("error", "?")))
            for k, v in export.items()) + ".")
        out.append("")
    out.append("| model | provider | device | model canary (vs CPU reference) | parity vs torch fp32 | open s |")
    out.append("|---|---|---|---|---|---|")
    for r in answers:
        if r.get("op") != "model":
            continue
        if "error" in r:
            out.append("| %s | %s | — | **error**: %s | | |" % (r.get("name") or r.get("model", "?"), r.get("provider", "?"), r["error"][:400]))
            continue
        c = r.get("canary") or {}
        if c.get("ran"):
            cs = "%s: %s %.6g (bar %g) vs %s, %d inputs, %.1f s" % ("passed" if c.get("passed") else "**FAILED**", c.get("measure"), c.get("value", 0),
                                                                 c.get("bar", 0), c.get("reference"), c.get("inputs", 0), c.get("seconds", 0))
        else:
            cs = c.get("skipped") or "not run"
        p = r.get("parity") or {}
        ps = "—"
        if "min_cosine_vs_torch_fp32" in p:
            ps = "min cosine %.6f %s" % (p["min_cosine_vs_torch_fp32"], "✓" if p.get("pass") else "✗")
        elif "max_abs_p_yes_vs_torch_fp32" in p:
            ps = "max |ΔP(yes)| %.2g %s" % (p["max_abs_p_yes_vs_torch_fp32"], "✓" if p.get("pass") else "✗")
        elif "error" in p:
            ps = "error: " + p["error"][:200]
        out.append("| %s | %s | %s | %s | %s | %.1f |" % (r.get("name"), r.get("provider"), r.get("device"), cs, ps, r.get("open_s", 0)))
    return out


def auto_pick(go, ort):
    """Which engine the numbers favour per workload, and what auto does today."""
    out = ["", "## Which engine auto should pick (auto today: our fp16 forward when its canary passes; never ORT CUDA)", ""]
    out.append("| model | workload | ours /s | ORT CUDA (fp16 export) /s | faster |")
    out.append("|---|---|---|---|---|")
    wins = {"ours": 0, "ort": 0}
    for g in go:
        o = next((r for r in ort if r["model"] == g["model"] and r["workload"] == g["workload"] and r["batch"] == g["batch"]
                  and r["seq"] == g["seq"] and r.get("mode") == "fp16 export"), None)
        if not o:
            continue
        who = "ours ×%.2f" % (g["items_per_s"] / o["items_per_s"]) if g["items_per_s"] >= o["items_per_s"] else "ORT ×%.2f" % (o["items_per_s"] / g["items_per_s"])
        wins["ours" if g["items_per_s"] >= o["items_per_s"] else "ort"] += 1
        out.append("| %s | %s %d×%d | %.0f | %.0f | %s |" % (g["model"], g["workload"], g["batch"], g["seq"], g["items_per_s"], o["items_per_s"], who))
    if wins["ours"] + wins["ort"] == 0:
        out.append("| (no workload measured on both) | | | | |")
        out.append("")
        out.append("auto: no measurement to change it; it keeps our fp16 forward.")
    else:
        out.append("")
        out.append("auto: %s (ours faster on %d workloads, ORT on %d)." % (
            "keep our fp16 forward as the GPU default" if wins["ours"] >= wins["ort"] else
            "the numbers favour ORT's CUDA provider: make it auto's GPU engine (embed/rerank Config.Provider)", wins["ours"], wins["ort"]))
    return out


def cmd_summary(a):
    par = read_json(os.path.join(a.out_dir, "parity.json"), {})
    go = read_json(os.path.join(a.out_dir, "go_timing.json"), [])
    tt = read_json(os.path.join(a.out_dir, "torch_timing.json"), [])
    ort_answers = read_jsonl(os.path.join(a.out_dir, "ort.jsonl"))
    ort = [row for r in ort_answers if r.get("op") == "model" and "error" not in r for row in (r.get("rows") or [])
           if row["impl"] == "onnxruntime-cuda" or a.dry]
    export = next((r.get("export", {}) for r in ort_answers if r.get("op") == "export"), {})
    env = ""
    try:
        with open(a.log) as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    env = [l for l in lines if l.startswith("env: ")]
    tests = [l for l in lines if l.startswith("--- ") or l.startswith("ok ") or l.startswith("FAIL")]
    out = []
    out.append("# GPU inference run, %s%s" % (time.strftime("%Y-%m-%d"), " (DRY RUN on the CPU emulator: plumbing only, no GPU numbers)" if a.dry else ""))
    out.append("")
    out += ["- " + l[len("env: "):] for l in env]
    out.append("")
    out.append("Command: `bash bench/gpu/inference.sh` (binaries from `bench/gpu/build.sh inference`, CGO_ENABLED=0: ONNX Runtime through purego); full log: log.txt.")
    out.append("")
    out.append("## GPU tests with REQUIRE_GPU=1")
    out.append("")
    out.append("```")
    out += tests or ["(no test output: see log.txt)"]
    out.append("```")
    out.append("")
    out.append("## Parity against PyTorch fp32 (random Hugging Face models, fixed seed, safetensors)")
    out.append("")
    e5, qw = par.get("e5"), par.get("qwen3-0.6b")
    out.append("| model | inputs (tokens) | measure | bar | value | pass |")
    out.append("|---|---|---|---|---|---|")
    if e5:
        out.append("| E5 / bert-base | %s | min cosine, ours (GPU fp16) vs torch fp32 | ≥ 0.999 | %.6f | %s |" % (
            e5["lengths"], e5["min_cosine_gpu_vs_torch_fp32"], "yes" if e5["min_cosine_gpu_vs_torch_fp32"] >= 0.999 else "**no**"))
        out.append("| | | batch vs one at a time, max abs | ≤ 1e-3 | %.2g | %s |" % (
            e5["max_abs_batch_vs_single"], "yes" if e5["max_abs_batch_vs_single"] <= 1e-3 else "**no**"))
        out.append("| | | min cosine, our Go fp32 reference (CPU) vs torch fp32 | — | %.7f | |" % e5["min_cosine_go_fp32_ref_vs_torch_fp32"])
    if qw:
        out.append("| Qwen3-Reranker 0.6B shape | %s | max abs P(yes), ours (GPU fp16) vs torch fp32 | ≤ 2e-3 | %.2g | %s |" % (
            qw["lengths"], qw["max_abs_p_yes_gpu_vs_torch_fp32"], "yes" if qw["max_abs_p_yes_gpu_vs_torch_fp32"] <= 2e-3 else "**no**"))
        out.append("| | | batch vs one at a time, max abs P(yes) | ≤ 1e-3 | %.2g | %s |" % (
            qw["max_abs_p_yes_batch_vs_single"], "yes" if qw["max_abs_p_yes_batch_vs_single"] <= 1e-3 else "**no**"))
        out.append("| | | max abs logit, ours vs torch fp32 | — | %.3g | |" % qw["max_abs_logit_gpu_vs_torch_fp32"])
        out.append("| | ≤ 32 tokens | max abs P(yes), our Go fp32 reference vs torch fp32 | — | %.2g | |" % qw["max_abs_p_yes_go_fp32_ref_vs_torch_fp32_short"])
        out.append("")
        out.append("torch fp32 P(yes) of the parity inputs: %s (random weights: the spread shows the scores are not constant)." %
                   ", ".join("%.3f" % p for p in qw.get("torch_p_yes", [])))
    if not e5 and not qw:
        out.append("| (no parity.json: the parity step failed, see log.txt) | | | | | |")
    out.append("")
    out.append("## Throughput, same run (end to end per call: ids to the device, forward pass, vectors / P(yes) to the host)")
    out.append("")
    out.append("| model | workload | rlsearch /s | ms | torch eager /s | ms | torch compiled /s | ms | ORT CUDA fp16 export /s | ms | ORT CUDA fp32 export /s | ms | ours / eager (goal ≥ 1.0) | ours / compiled (goal ≥ 0.8) | ours / ORT fp16 |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    keys = []
    for r in go + tt:
        k = (r["model"], r["workload"], r["batch"], r["seq"])
        if k not in keys:
            keys.append(k)

    def find(rows, k, mode=None):
        for r in rows:
            if (r["model"], r["workload"], r["batch"], r["seq"]) == k and (mode is None or r.get("mode") == mode):
                return r
        return None

    for r in ort:
        k = (r["model"], r["workload"], r["batch"], r["seq"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        g, e, c = find(go, k), find(tt, k, "fp16 eager"), find(tt, k, "fp16 compiled")
        o16, o32 = find(ort, k, "fp16 export"), find(ort, k, "fp32 export")

        def cell(r):
            if not r:
                return "—", "—"
            if r.get("skipped"):
                return "skipped", r["skipped"]
            return "%.0f" % r["items_per_s"], "%.2f" % r["median_ms"]

        def ratio(x, y, goal):
            if not x or not y or y.get("skipped") or x.get("skipped"):
                return "—"
            v = x["items_per_s"] / y["items_per_s"]
            if not goal:
                return "%.2f×" % v
            return "%.2f× %s" % (v, "✓" if v >= goal else "✗")

        out.append("| %s | %s %d×%d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            (k[0], k[1], k[2], k[3]) + cell(g) + cell(e) + cell(c) + cell(o16) + cell(o32) + (ratio(g, e, 1.0), ratio(g, c, 0.8), ratio(g, o16, 0))))
    comp = [r for r in tt if r.get("compile_s")]
    if comp:
        out.append("")
        out.append("torch.compile times: " + ", ".join("%s %s %.0f s" % (r["model"], r["workload"], r["compile_s"]) for r in comp) + ".")
    out += ort_section(ort_answers, export)
    out += auto_pick(go, ort)
    out.append("")
    out += e2e_section(os.path.join(a.out_dir, "e2e.jsonl"))
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--work", required=True)
    b.add_argument("--seed", type=int, default=1)
    d = sub.add_parser("dryrun-build")
    d.add_argument("--work", required=True)
    x = sub.add_parser("export")
    x.add_argument("--work", required=True)
    x.add_argument("--seed", type=int, default=1)
    x.add_argument("--deadline", type=float, default=40)
    x.add_argument("--bert-tokenizer", required=True)
    x.add_argument("--qwen-tokenizer", required=True)
    t = sub.add_parser("time")
    t.add_argument("--out", required=True)
    t.add_argument("--models", default="e5,qwen0.6b,qwen4b")
    t.add_argument("--deadline", type=float, default=160, help="seconds from start for everything, compiles included")
    t.add_argument("--no-compile", dest="compile", action="store_false")
    s = sub.add_parser("summary")
    s.add_argument("--out-dir", required=True, help="where parity.json, go_timing.json, torch_timing.json, e2e.jsonl are")
    s.add_argument("--log", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--dry", action="store_true")
    a = ap.parse_args(argv)
    {"build": cmd_build, "export": cmd_export, "dryrun-build": cmd_dryrun_build, "time": cmd_time, "summary": cmd_summary}[a.cmd](a)


if __name__ == "__main__":
    main(sys.argv[1:])
