#!/usr/bin/python3
"""Generate small Qwen3-architecture causal LMs with seeded random weights (a
stand-in for Qwen3-Reranker-0.6B/4B exports), and compute their logits with
an independent numpy forward pass.

Run with Debian's interpreter (/usr/bin/python3: python3-onnx, python3-numpy).

  gen_qwen3.py gen --variant full --seed 1 --out DIR [--tokenizer .cache/tokenizers/qwen3.json]
  gen_qwen3.py reference --model DIR [--in req.json] [--out resp.json]

`gen` writes a reranker model directory atomically (temporary sibling + rename):

  model.onnx      Qwen3ForCausalLM as an ONNX graph (opset 14), same inputs and
                  outputs as an optimum export without KV cache:
                    variant "full": inputs int64 input_ids, attention_mask,
                      position_ids [batch, seq]; output float32 logits
                      [batch, seq, vocab]
                    variant "last": inputs int64 input_ids, attention_mask
                      [batch, seq] (positions 0..seq-1, as transformers uses
                      without position_ids); output float32 logits
                      [batch, vocab] of the last position (left padding assumed)
                  Per layer (transformers modeling_qwen3.py): RMSNorm (eps 1e-6)
                  -> q/k/v projections without bias -> per-head RMSNorm of q and
                  k (q_norm, k_norm) -> RoPE (theta 1e6, rotate_half layout) ->
                  grouped-query attention (heads share kv heads in groups),
                  causal and padding mask, softmax(q k^T / sqrt(head_dim)) ->
                  o_proj -> residual; RMSNorm -> SwiGLU MLP
                  down(silu(gate(x)) * up(x)) -> residual. Final RMSNorm, LM
                  head tied to the input embedding (tie_word_embeddings, as
                  Qwen3-0.6B and -4B).
                  Initializers are named as torch.onnx.export names a
                  Qwen3ForCausalLM's: state-dict names for the embedding and
                  norms, anonymous onnx::MatMul_N for the projections.
  config.json     Hugging Face Qwen3Config (model_type qwen3, shapes, eps,
                  rope_theta, tie_word_embeddings), as save_pretrained writes it
  tokenizer.json  copied from --tokenizer (the real Qwen3 tokenizer, vocab
                  151,669 ids, so real token ids index the embedding)
  rlsearch.json   reranker config (kind qwen3-reranker, inputs, output)
  gen_qwen3.json  generator record (preset, variant, seed, shapes)
  model.safetensors  only with --safetensors f32|f16|bf16: the state dict
                  (Hugging Face names, [out, in] projections, no lm_head:
                  tied); --shards N writes shards + model.safetensors.index.json
  model.onnx.data only with --external-data: the weights, referenced by model.onnx

With --nan-token ID the graph ends in Where(row holds ID, NaN, logits): every
logit of a row whose attended tokens include ID is NaN, so a reranker test can
put a NaN score on exactly the pairs whose document holds that token (the
fault of a broken export). Other rows are unchanged; `reference` does not
model it.

Weights (seeded numpy default_rng): embedding normal(0, 1) so that tied
logits spread the yes/no scores over (0, 1); projections normal(0, 0.1);
RMSNorm gains 1 + normal(0, 0.1).

`reference` reads {"input_ids": [[...]], "token_ids": [id, ...]} with
unpadded rows, runs the float64 numpy forward written separately from the
graph below, and writes {"logits": [[logit of each token_ids at the last
position] per row]}.
"""

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bert import add_export_args, model_dir_files, run_cli, safetensors_files, write_atomic  # noqa: E402  (same writers and options as the BERT generator)

PRESETS = {
    # layers, hidden, heads, kv_heads, head_dim, intermediate
    "tiny": dict(layers=2, hidden=32, heads=4, kv_heads=2, head_dim=16, intermediate=64),
    "small": dict(layers=4, hidden=64, heads=4, kv_heads=2, head_dim=32, intermediate=192),
}
VOCAB = 151669  # len(Qwen3 tokenizer.json): 151,643 BPE tokens + 26 added tokens
RMS_EPS = 1e-6  # rms_norm_eps (Qwen3-Reranker-0.6B config.json)
ROPE_THETA = 1000000.0  # rope_theta (Qwen3-Reranker-0.6B config.json)
MASK_NEG = -1e9  # additive value for masked attention logits
OPSET = 14


def make_weights(preset, seed):
    """name -> float32 array; matrices are [in, out] so that y = x @ W."""
    p = PRESETS[preset]
    h, nh, kvh, hd, inter = p["hidden"], p["heads"], p["kv_heads"], p["head_dim"], p["intermediate"]
    rng = np.random.default_rng(seed)

    def normal(std, *shape):
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32)

    def gain(n):
        return (1.0 + rng.standard_normal(n, dtype=np.float32) * 0.1).astype(np.float32)

    w = {"embed": normal(1.0, VOCAB, h)}
    for l in range(p["layers"]):
        pre = "l%d." % l
        w[pre + "in_norm"] = gain(h)
        w[pre + "q"] = normal(0.1, h, nh * hd)
        w[pre + "k"] = normal(0.1, h, kvh * hd)
        w[pre + "v"] = normal(0.1, h, kvh * hd)
        w[pre + "q_norm"] = gain(hd)
        w[pre + "k_norm"] = gain(hd)
        w[pre + "o"] = normal(0.1, nh * hd, h)
        w[pre + "post_norm"] = gain(h)
        w[pre + "gate"] = normal(0.1, h, inter)
        w[pre + "up"] = normal(0.1, h, inter)
        w[pre + "down"] = normal(0.1, inter, h)
    w["norm"] = gain(h)
    return w


# ---------------------------------------------------------------------------
# ONNX graph
# ---------------------------------------------------------------------------

# Initializer names as torch.onnx.export gives a Hugging Face
# Qwen3ForCausalLM: state-dict names for the embedding and the norms,
# anonymous onnx::MatMul_N for the bias-free [in, out] projections (package
# transformer matches those by graph order and structure, as it must for
# real exports).
_QWEN3_NORMS = {"in_norm": "input_layernorm.weight", "post_norm": "post_attention_layernorm.weight",
                "q_norm": "self_attn.q_norm.weight", "k_norm": "self_attn.k_norm.weight"}


def torch_names(w):
    out, anon = {"embed": "model.embed_tokens.weight", "norm": "model.norm.weight"}, [0]
    for k in w:
        if k in out:
            continue
        layer, slot = k.split(".")
        if slot in _QWEN3_NORMS:
            out[k] = "model.layers.%s.%s" % (layer[1:], _QWEN3_NORMS[slot])
        else:
            anon[0] += 1
            out[k] = "onnx::MatMul_%d" % (2000 + anon[0])
    return out


def hf_state_dict(w):
    """The Qwen3ForCausalLM state dict: Hugging Face names, projections
    [out, in]; no lm_head.weight (tied to the embedding, as save_pretrained
    drops it)."""
    names = torch_names(w)
    proj = {"q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj", "o": "self_attn.o_proj",
            "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj"}
    out = {}
    for k, v in w.items():
        n = names[k]
        if n.startswith("onnx::MatMul_"):
            layer, slot = k.split(".")
            n, v = "model.layers.%s.%s.weight" % (layer[1:], proj[slot]), v.T
        out[n] = v
    return out


def hf_config(p):
    """config.json as transformers' Qwen3Config writes it (what the GPU path reads)."""
    return {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": VOCAB,
            "hidden_size": p["hidden"], "num_hidden_layers": p["layers"], "num_attention_heads": p["heads"],
            "num_key_value_heads": p["kv_heads"], "head_dim": p["head_dim"], "intermediate_size": p["intermediate"],
            "hidden_act": "silu", "rms_norm_eps": RMS_EPS, "rope_theta": ROPE_THETA, "rope_scaling": None,
            "tie_word_embeddings": True, "attention_bias": False, "use_sliding_window": False,
            "max_position_embeddings": 40960, "torch_dtype": "float32"}


def build_graph(preset, variant, w, nan_token=None, out_dtype="f32"):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    p = PRESETS[preset]
    h, nh, kvh, hd = p["hidden"], p["heads"], p["kv_heads"], p["head_dim"]
    rep = nh // kvh
    nodes, inits = [], []
    counter = [0]

    onnx_names = torch_names(w)

    def op(kind, inputs, **attrs):
        counter[0] += 1
        out = "%s_%d" % (kind, counter[0])
        inputs = [onnx_names.get(i, i) for i in inputs]
        nodes.append(helper.make_node(kind, inputs, [out], name=out + "_node", **attrs))
        return out

    def const(n, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    for k, v in w.items():
        const(onnx_names[k], v)
    const("c.eps", np.array(RMS_EPS, np.float32))
    const("c.one", np.array(1.0, np.float32))
    const("c.neg", np.array(MASK_NEG, np.float32))
    const("c.zero", np.array(0.0, np.float32))
    const("c.scale", np.array(1.0 / math.sqrt(hd), np.float32))
    const("c.i0", np.array(0, np.int64))
    const("c.i1", np.array(1, np.int64))
    const("c.inv_freq", (1.0 / (ROPE_THETA ** (np.arange(0, hd, 2, dtype=np.float64) / hd))).astype(np.float32))
    const("c.shape_q", np.array([0, 0, nh, hd], np.int64))
    const("c.shape_kv", np.array([0, 0, kvh, hd], np.int64))
    const("c.rep", np.array([1, 1, rep, 1, 1], np.int64))
    const("c.shape_rep", np.array([0, nh, -1, hd], np.int64))
    const("c.shape_ctx", np.array([0, 0, nh * hd], np.int64))
    const("c.flat", np.array([-1, h], np.int64))
    const("c.half_lo", np.array([0], np.int64))
    const("c.half_mid", np.array([hd // 2], np.int64))
    const("c.half_hi", np.array([hd], np.int64))
    const("c.axis_last", np.array([-1], np.int64))
    const("c.ax1", np.array([1], np.int64))
    const("c.ax12", np.array([1, 2], np.int64))
    const("c.ax01", np.array([0, 1], np.int64))
    const("c.ax2", np.array([2], np.int64))
    const("c.vocab", np.array([VOCAB], np.int64))

    def rms(x, g):
        var = op("ReduceMean", [op("Mul", [x, x])], axes=[-1], keepdims=1)
        return op("Mul", [op("Div", [x, op("Sqrt", [op("Add", [var, "c.eps"])])]), g])

    ids = "input_ids"
    seq = op("Gather", [op("Shape", [ids]), "c.i1"], axis=0)  # scalar S
    x = op("Gather", ["embed", ids], axis=0)  # [B, S, H]

    # Positions -> cos, sin broadcastable to [B, nh, S, hd].
    if variant == "full":
        pos = op("Cast", ["position_ids"], to=TensorProto.FLOAT)  # [B, S]
        freqs = op("Mul", [op("Unsqueeze", [pos, "c.axis_last"]), "c.inv_freq"])  # [B, S, hd/2]
        emb = op("Concat", [freqs, freqs], axis=-1)  # [B, S, hd]
        cos = op("Unsqueeze", [op("Cos", [emb]), "c.ax1"])  # [B, 1, S, hd]
        sin = op("Unsqueeze", [op("Sin", [emb]), "c.ax1"])
    else:
        pos = op("Cast", [op("Range", ["c.i0", seq, "c.i1"])], to=TensorProto.FLOAT)  # [S]
        freqs = op("Mul", [op("Unsqueeze", [pos, "c.axis_last"]), "c.inv_freq"])  # [S, hd/2]
        emb = op("Concat", [freqs, freqs], axis=-1)
        cos, sin = op("Cos", [emb]), op("Sin", [emb])  # [S, hd]

    def rope(t):
        x1 = op("Slice", [t, "c.half_lo", "c.half_mid", "c.axis_last"])
        x2 = op("Slice", [t, "c.half_mid", "c.half_hi", "c.axis_last"])
        rot = op("Concat", [op("Neg", [x2]), x1], axis=-1)
        return op("Add", [op("Mul", [t, cos]), op("Mul", [rot, sin])])

    # Mask [B, 1, S, S]: key j visible from query i when j <= i and mask[b, j].
    r = op("Range", ["c.i0", seq, "c.i1"])
    causal = op("Not", [op("Greater", [op("Unsqueeze", [r, "c.i0"]), op("Unsqueeze", [r, "c.i1"])])])  # [S, S]
    pad = op("Cast", [op("Unsqueeze", ["attention_mask", "c.ax12"])], to=TensorProto.BOOL)  # [B, 1, 1, S]
    allowed = op("And", [op("Unsqueeze", [causal, "c.ax01"]), pad])  # [B, 1, S, S]

    for l in range(p["layers"]):
        pre = "l%d." % l
        hs = rms(x, pre + "in_norm")
        q = op("Reshape", [op("MatMul", [hs, pre + "q"]), "c.shape_q"])  # [B, S, nh, hd]
        k = op("Reshape", [op("MatMul", [hs, pre + "k"]), "c.shape_kv"])
        v = op("Reshape", [op("MatMul", [hs, pre + "v"]), "c.shape_kv"])
        q = op("Transpose", [rms(q, pre + "q_norm")], perm=[0, 2, 1, 3])  # [B, nh, S, hd]
        k = op("Transpose", [rms(k, pre + "k_norm")], perm=[0, 2, 1, 3])  # [B, kvh, S, hd]
        v = op("Transpose", [v], perm=[0, 2, 1, 3])
        q, k = rope(q), rope(k)

        def repeat_kv(t):  # [B, kvh, S, hd] -> [B, nh, S, hd], head i uses kv head i // rep
            t = op("Expand", [op("Unsqueeze", [t, "c.ax2"]), "c.rep"])  # [B, kvh, rep, S, hd]
            return op("Reshape", [t, "c.shape_rep"])

        k, v = repeat_kv(k), repeat_kv(v)
        scores = op("Mul", [op("MatMul", [q, op("Transpose", [k], perm=[0, 1, 3, 2])]), "c.scale"])
        scores = op("Where", [allowed, scores, "c.neg"])
        probs = op("Softmax", [scores], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), "c.shape_ctx"])
        x = op("Add", [x, op("MatMul", [ctx, pre + "o"])])

        hs = rms(x, pre + "post_norm")
        gate = op("MatMul", [hs, pre + "gate"])
        act = op("Mul", [gate, op("Sigmoid", [gate])])
        x = op("Add", [x, op("MatMul", [op("Mul", [act, op("MatMul", [hs, pre + "up"])]), pre + "down"])])

    x = rms(x, "norm")
    if variant == "full":
        flat = op("Reshape", [x, "c.flat"])  # [B*S, H]
        logits2 = op("Gemm", [flat, "embed"], transB=1)  # [B*S, V]
        shape = op("Concat", [op("Shape", [ids]), "c.vocab"], axis=0)  # [B, S, V]
        out = op("Reshape", [logits2, shape])
        out_shape = ["batch", "sequence", VOCAB]
    else:
        last = op("Gather", [x, op("Sub", [seq, "c.i1"])], axis=1)  # [B, H]
        out = op("Gemm", [last, "embed"], transB=1)  # [B, V]
        out_shape = ["batch", VOCAB]
    if nan_token is not None:
        # Rows whose attended tokens include nan_token: every logit NaN.
        const("c.nan", np.array(np.nan, np.float32))
        const("c.nan_tok", np.array(nan_token, np.int64))
        hit = op("Cast", [op("Equal", [ids, "c.nan_tok"])], to=TensorProto.FLOAT)  # [B, S]
        att = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
        anyhit = op("ReduceMax", [op("Mul", [hit, att])], axes=[1], keepdims=1)  # [B, 1]
        if variant == "full":
            anyhit = op("Unsqueeze", [anyhit, "c.ax2"])  # [B, 1, 1]
        out = op("Where", [op("Cast", [anyhit], to=TensorProto.BOOL), "c.nan", out])
    if out_dtype == "f16":  # as an fp16 export gives it (the graph itself stays float32)
        nodes.append(helper.make_node("Cast", [out], ["logits"], name="output_node", to=TensorProto.FLOAT16))
    else:
        nodes.append(helper.make_node("Identity", [out], ["logits"], name="output_node"))

    in_names = ["input_ids", "attention_mask"] + (["position_ids"] if variant == "full" else [])
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in in_names]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT16 if out_dtype == "f16" else TensorProto.FLOAT, out_shape)]
    graph = helper.make_graph(nodes, "qwen3_%s_%s" % (preset, variant), inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="rlsearch/scripts/gen_qwen3.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, in_names


def cmd_gen(a):
    if not os.path.isfile(a.tokenizer):
        sys.exit("gen_qwen3: tokenizer %s not found (run scripts/setup.sh)" % a.tokenizer)
    w = make_weights(a.preset, a.seed)
    model, in_names = build_graph(a.preset, a.variant, w, a.nan_token, a.output_dtype)
    name = a.name or "gen-qwen3-%s-%s-seed%d" % (a.preset, a.variant, a.seed)
    cfg = {"kind": "qwen3-reranker", "name": name, "inputs": in_names, "output": "logits"}
    rec = dict(preset=a.preset, variant=a.variant, seed=a.seed, nan_token=a.nan_token, vocab=VOCAB, rms_eps=RMS_EPS,
               rope_theta=ROPE_THETA, opset=OPSET, **PRESETS[a.preset])
    files = model_dir_files("gen_qwen3", model, a.tokenizer, cfg, hf_config(PRESETS[a.preset]), rec)
    if a.external_data:
        def save_external(path):
            # Weights in model.onnx.data beside model.onnx, as exports over
            # 2 GB (Qwen3-Reranker in float32) must be written.
            import onnx
            onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location="model.onnx.data", size_threshold=1024)
        files["model.onnx"] = save_external
    if a.safetensors:
        files.update(safetensors_files(hf_state_dict(w), a.safetensors, a.shards))
    write_atomic(a.out, files)
    print("gen_qwen3: wrote %s (%s/%s, seed %d, %.1f MB model.onnx)" % (
        a.out, a.preset, a.variant, a.seed, os.path.getsize(os.path.join(a.out, "model.onnx")) / 1e6),
        file=sys.stderr)


# ---------------------------------------------------------------------------
# Independent numpy reference (float64), written from the architecture
# description, not from the graph above
# ---------------------------------------------------------------------------


def np_rms(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def np_rope(t, positions, theta):
    """t [S, heads, hd]; the rotate_half RoPE of transformers' Qwen3."""
    hd = t.shape[-1]
    inv = 1.0 / theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd)
    ang = np.outer(positions, inv)  # [S, hd/2]
    cos = np.cos(np.concatenate([ang, ang], -1))[:, None, :]
    sin = np.sin(np.concatenate([ang, ang], -1))[:, None, :]
    half = hd // 2
    rot = np.concatenate([-t[..., half:], t[..., :half]], -1)
    return t * cos + rot * sin


def np_forward_last(rec, w, ids):
    """One unpadded sequence -> logits [V] at its last position."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    s = len(ids)
    nh, kvh, hd, eps = rec["heads"], rec["kv_heads"], rec["head_dim"], rec["rms_eps"]
    pos = np.arange(s, dtype=np.float64)
    x = w["embed"][ids]
    for l in range(rec["layers"]):
        pre = "l%d." % l
        hs = np_rms(x, w[pre + "in_norm"], eps)
        q = np_rms((hs @ w[pre + "q"]).reshape(s, nh, hd), w[pre + "q_norm"], eps)
        k = np_rms((hs @ w[pre + "k"]).reshape(s, kvh, hd), w[pre + "k_norm"], eps)
        v = (hs @ w[pre + "v"]).reshape(s, kvh, hd)
        q, k = np_rope(q, pos, rec["rope_theta"]), np_rope(k, pos, rec["rope_theta"])
        ctx = np.zeros((s, nh, hd))
        group = nh // kvh
        for head in range(nh):
            kv = head // group
            sc = q[:, head, :] @ k[:, kv, :].T / math.sqrt(hd)
            sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
            sc = sc - sc.max(-1, keepdims=True)
            e = np.exp(sc)
            ctx[:, head, :] = (e / e.sum(-1, keepdims=True)) @ v[:, kv, :]
        x = x + ctx.reshape(s, nh * hd) @ w[pre + "o"]
        hs = np_rms(x, w[pre + "post_norm"], eps)
        g = hs @ w[pre + "gate"]
        x = x + ((g / (1.0 + np.exp(-g))) * (hs @ w[pre + "up"])) @ w[pre + "down"]
    x = np_rms(x, w["norm"], eps)
    return w["embed"] @ x[-1]


def cmd_reference(a):
    with open(os.path.join(a.model, "gen_qwen3.json")) as f:
        rec = json.load(f)
    w = make_weights(rec["preset"], rec["seed"])
    src = open(a.inp) if a.inp != "-" else sys.stdin
    with src:
        req = json.load(src)
    toks = req["token_ids"]
    out = []
    for row in req["input_ids"]:
        if not row:
            sys.exit("gen_qwen3: empty row")
        logits = np_forward_last(rec, w, np.asarray(row, np.int64))
        out.append([float(logits[t]) for t in toks])
    dst = open(a.out, "w") if a.out != "-" else sys.stdout
    with dst:
        json.dump({"logits": out}, dst)
        dst.write("\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    g = sub.add_parser("gen", help="write a model directory")
    g.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    g.add_argument("--variant", default="full", choices=["full", "last"])
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--name", default="")
    g.add_argument("--tokenizer", default=os.path.join(here, "..", ".cache", "tokenizers", "qwen3.json"))
    g.add_argument("--external-data", action="store_true",
                   help="store the weights in model.onnx.data (external data) next to model.onnx")
    g.add_argument("--nan-token", type=int, default=None,
                   help="token id that makes every logit of its row NaN (tests of non-finite scores)")
    add_export_args(g, "logits are")
    run_cli(ap, sub, argv, "numpy reference logits at the last position", cmd_gen, cmd_reference)


if __name__ == "__main__":
    main(sys.argv[1:])
