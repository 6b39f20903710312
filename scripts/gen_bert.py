#!/usr/bin/python3
"""Generate BERT-architecture test encoders with seeded random weights, and
compute their reference embeddings with an independent numpy forward pass.

Run with Debian's interpreter (/usr/bin/python3: python3-onnx, python3-numpy);
no torch needed.

  gen_bert.py gen --preset tiny --seed 1 --tokenizer .cache/tokenizers/bert-uncased.json --out DIR
  gen_bert.py gen --preset tiny --head classifier --num-labels 1 --out DIR   (cross-encoder)
  gen_bert.py reference --model DIR [--in ids.json] [--out emb.json]

`gen` (also the default when the first argument is an option) writes an
E5-style model directory, atomically (temporary sibling directory + rename):

  model.onnx      the real BertModel graph (HF transformers BertModel as
                  torch.onnx exports it at opset 14): inputs int64 input_ids,
                  attention_mask, token_type_ids [batch, seq] (dynamic axes);
                  output float32 last_hidden_state [batch, seq, hidden].
                  Embeddings word + position + token type, LayerNorm eps 1e-12;
                  per layer: multi-head self-attention with the additive mask
                  (1 - mask) * -10000 (original BERT), residual + LayerNorm,
                  FFN with exact erf GELU, residual + LayerNorm.
                  Initializers are named as torch.onnx.export names a BertModel's:
                  state-dict names for embeddings, LayerNorms and biases,
                  anonymous onnx::MatMul_N for the [in, out] Linear weights.
  config.json     Hugging Face BertConfig (model_type bert, shapes, eps,
                  hidden_act gelu), as save_pretrained / optimum write it
  tokenizer.json  copied from --tokenizer (BERT uncased, vocab 30522)
  rlsearch.json   our model config (name, dim, max_length 256, E5 prefixes,
                  mean pooling, normalize, input names, output name)
  gen_bert.json   generator record (preset, seed, shapes) for `reference`
  model.safetensors  only with --safetensors f32|f16|bf16: the BertModel state
                  dict (Hugging Face names, Linear weights [out, in]); with
                  --shards N, N shard files and model.safetensors.index.json
  weights.npz     only with --save-weights (otherwise `reference` regenerates
                  the weights from preset + seed, which is deterministic)

Weights: normal(0, 0.02) for matrices, embeddings and biases (BERT
initializer_range 0.02), LayerNorm gamma = 1 + normal(0, 0.02), beta normal(0, 0.02).

With --head classifier the directory is a cross-encoder for package rerank
(BertForSequenceClassification as exported for ms-marco cross-encoders):
the graph continues with the pooler tanh(h[CLS] @ Wp + bp) and the
classifier pooled @ Wc + bc; its only output is float32 logits
[batch, num_labels], and rlsearch.json says kind "cross-encoder",
max_length 512, activation "none" (softmax with label 1 for two labels).
Head weights come after the encoder's from the same generator (so the
encoder weights equal the plain preset's): Wp normal(0, 0.2), Wc normal(0, 0.3)
and biases normal(0, 0.02), large enough that scores differ between inputs.

`reference` reads JSON {"input_ids": [[...]], "attention_mask": [[...]]}
(rows may have different lengths; a missing attention_mask means all ones;
token_type_ids optional, default 0), runs the float64 numpy forward pass written
separately from the graph construction below, mean-pools over the attention
mask, L2-normalises (when rlsearch.json says so) and writes
{"embeddings": [[...]], "dim": D}.
"""

import argparse
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np

PRESETS = {
    # name: layers, hidden, heads, intermediate
    "tiny": dict(layers=2, hidden=128, heads=2, intermediate=512),
    # all-MiniLM-L6 / e5-small shapes
    "minilm": dict(layers=6, hidden=384, heads=12, intermediate=1536),
    # bert-base-uncased / e5-base-v2 shapes (their config.json): the E5 model Search-R1 serves
    "base": dict(layers=12, hidden=768, heads=12, intermediate=3072),
}
VOCAB = 30522  # BERT uncased vocabulary size (bert-base-uncased config.json)
POSITIONS = 512  # max_position_embeddings (bert-base-uncased config.json)
TYPE_VOCAB = 2  # type_vocab_size (bert-base-uncased config.json)
LN_EPS = 1e-12  # layer_norm_eps (bert-base-uncased config.json)
MASK_NEG = -10000.0  # additive attention mask value of the original BERT code
INIT_STD = 0.02  # initializer_range (bert-base-uncased config.json)
OPSET = 14


def make_weights(preset, seed, head="", num_labels=1):
    """Deterministic weights for preset and seed: dict name -> float32 array.

    Matrices are stored [in, out] so that y = x @ W + b."""
    p = PRESETS[preset]
    h, inter = p["hidden"], p["intermediate"]
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * INIT_STD).astype(np.float32)

    def gamma(n):
        return (1.0 + rng.standard_normal(n, dtype=np.float32) * INIT_STD).astype(np.float32)

    w = {}
    w["emb.word"] = normal(VOCAB, h)
    w["emb.pos"] = normal(POSITIONS, h)
    w["emb.type"] = normal(TYPE_VOCAB, h)
    w["emb.ln.g"] = gamma(h)
    w["emb.ln.b"] = normal(h)
    for l in range(p["layers"]):
        pre = "l%d." % l
        for n in ("q", "k", "v", "ao"):
            w[pre + n + ".w"] = normal(h, h)
            w[pre + n + ".b"] = normal(h)
        w[pre + "ln1.g"] = gamma(h)
        w[pre + "ln1.b"] = normal(h)
        w[pre + "fi.w"] = normal(h, inter)
        w[pre + "fi.b"] = normal(inter)
        w[pre + "fo.w"] = normal(inter, h)
        w[pre + "fo.b"] = normal(h)
        w[pre + "ln2.g"] = gamma(h)
        w[pre + "ln2.b"] = normal(h)
    if head == "classifier":
        w["pool.w"] = (rng.standard_normal((h, h), dtype=np.float32) * 0.2).astype(np.float32)
        w["pool.b"] = normal(h)
        w["cls.w"] = (rng.standard_normal((h, num_labels), dtype=np.float32) * 0.3).astype(np.float32)
        w["cls.b"] = normal(num_labels)
    return w


# ---------------------------------------------------------------------------
# ONNX graph construction
# ---------------------------------------------------------------------------

# Initializer names as torch.onnx.export gives a Hugging Face BertModel:
# parameters used as they are keep their state-dict names; the folded
# transposes of Linear weights (MatMul's B, [in, out]) get anonymous
# onnx::MatMul_N names. Package transformer reads the weights back from
# these initializers (GPU path), so the test models are shaped like exports.
_BERT_SLOTS = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
               "ao": "attention.output.dense", "ln1": "attention.output.LayerNorm",
               "fi": "intermediate.dense", "fo": "output.dense", "ln2": "output.LayerNorm"}


def torch_names(w):
    out, anon = {}, [0]

    def matmul():
        anon[0] += 1
        return "onnx::MatMul_%d" % (1000 + anon[0])

    fixed = {"emb.word": "embeddings.word_embeddings.weight", "emb.pos": "embeddings.position_embeddings.weight",
             "emb.type": "embeddings.token_type_embeddings.weight", "emb.ln.g": "embeddings.LayerNorm.weight",
             "emb.ln.b": "embeddings.LayerNorm.bias", "pool.b": "pooler.dense.bias", "cls.b": "classifier.bias"}
    for k in w:
        if k in fixed:
            out[k] = fixed[k]
        elif k in ("pool.w", "cls.w"):
            out[k] = matmul()
        else:
            layer, slot, kind = k.split(".")
            base = "encoder.layer.%s.%s" % (layer[1:], _BERT_SLOTS[slot])
            if kind == "w":
                out[k] = matmul()
            else:
                out[k] = base + {"b": ".bias", "g": ".weight"}[kind]  # LayerNorm gain g is .weight
    return out


def hf_config(p, head="", num_labels=1):
    """config.json as transformers' BertConfig writes it (what the GPU path reads)."""
    cfg = {"architectures": ["BertForSequenceClassification" if head else "BertModel"], "model_type": "bert",
           "vocab_size": VOCAB, "hidden_size": p["hidden"], "num_hidden_layers": p["layers"],
           "num_attention_heads": p["heads"], "intermediate_size": p["intermediate"], "hidden_act": "gelu",
           "max_position_embeddings": POSITIONS, "type_vocab_size": TYPE_VOCAB, "layer_norm_eps": LN_EPS,
           "position_embedding_type": "absolute", "initializer_range": INIT_STD, "pad_token_id": 0,
           "torch_dtype": "float32"}
    if head:
        cfg["num_labels"] = num_labels
    return cfg


def build_graph(preset, w, head="", num_labels=1, out_dtype="f32"):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    p = PRESETS[preset]
    h, heads = p["hidden"], p["heads"]
    hd = h // heads
    nodes = []
    inits = []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return "%s_%d" % (prefix, counter[0])

    def init(n, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    onnx_names = torch_names(w)

    def op(kind, inputs, **attrs):
        out = name(kind)
        inputs = [onnx_names.get(i, i) for i in inputs]
        nodes.append(helper.make_node(kind, inputs, [out], name=out + "_node", **attrs))
        return out

    for k, v in w.items():
        init(onnx_names[k], v)
    init("c.eps", np.array(LN_EPS, np.float32))
    init("c.one", np.array(1.0, np.float32))
    init("c.half", np.array(0.5, np.float32))
    init("c.sqrt2", np.array(math.sqrt(2.0), np.float32))
    init("c.maskneg", np.array(MASK_NEG, np.float32))
    init("c.scale", np.array(math.sqrt(hd), np.float32))
    init("c.i0", np.array(0, np.int64))
    init("c.i1", np.array(1, np.int64))
    init("c.axes12", np.array([1, 2], np.int64))
    init("c.shape_heads", np.array([0, 0, heads, hd], np.int64))
    init("c.shape_hidden", np.array([0, 0, h], np.int64))

    def layer_norm(x, g, b):
        mean = op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = op("Sub", [x, mean])
        var = op("ReduceMean", [op("Mul", [d, d])], axes=[-1], keepdims=1)
        std = op("Sqrt", [op("Add", [var, "c.eps"])])
        return op("Add", [op("Mul", [op("Div", [d, std]), g]), b])

    def dense(x, wn, bn):
        return op("Add", [op("MatMul", [x, wn]), bn])

    # Embeddings.
    word = op("Gather", ["emb.word", "input_ids"], axis=0)
    seq = op("Gather", [op("Shape", ["input_ids"]), "c.i1"], axis=0)
    positions = op("Range", ["c.i0", seq, "c.i1"])
    pos = op("Gather", ["emb.pos", positions], axis=0)  # [S, H], broadcast over batch
    typ = op("Gather", ["emb.type", "token_type_ids"], axis=0)
    x = op("Add", [op("Add", [word, typ]), pos])
    x = layer_norm(x, "emb.ln.g", "emb.ln.b")

    # Extended attention mask [B, 1, 1, S]: (1 - mask) * -10000.
    maskf = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = op("Mul", [op("Sub", ["c.one", maskf]), "c.maskneg"])
    ext = op("Unsqueeze", [ext, "c.axes12"])

    for l in range(p["layers"]):
        pre = "l%d." % l

        def heads_of(t):
            return op("Transpose", [op("Reshape", [t, "c.shape_heads"])], perm=[0, 2, 1, 3])

        q = heads_of(dense(x, pre + "q.w", pre + "q.b"))  # [B, nh, S, hd]
        k = heads_of(dense(x, pre + "k.w", pre + "k.b"))
        v = heads_of(dense(x, pre + "v.w", pre + "v.b"))
        kt = op("Transpose", [k], perm=[0, 1, 3, 2])  # [B, nh, hd, S]
        scores = op("Div", [op("MatMul", [q, kt]), "c.scale"])
        scores = op("Add", [scores, ext])
        probs = op("Softmax", [scores], axis=-1)
        ctx = op("MatMul", [probs, v])  # [B, nh, S, hd]
        ctx = op("Reshape", [op("Transpose", [ctx], perm=[0, 2, 1, 3]), "c.shape_hidden"])
        attn = dense(ctx, pre + "ao.w", pre + "ao.b")
        x = layer_norm(op("Add", [attn, x]), pre + "ln1.g", pre + "ln1.b")

        f = dense(x, pre + "fi.w", pre + "fi.b")
        gelu = op("Mul", [op("Mul", [f, "c.half"]),
                          op("Add", [op("Erf", [op("Div", [f, "c.sqrt2"])]), "c.one"])])
        f = dense(gelu, pre + "fo.w", pre + "fo.b")
        x = layer_norm(op("Add", [f, x]), pre + "ln2.g", pre + "ln2.b")

    if head == "classifier":
        cls_tok = op("Gather", [x, "c.i0"], axis=1)  # [B, H], the [CLS] position
        pooled = op("Tanh", [dense(cls_tok, "pool.w", "pool.b")])
        logits = dense(pooled, "cls.w", "cls.b")
        if out_dtype == "f16":
            nodes.append(helper.make_node("Cast", [logits], ["logits"], name="output_node", to=TensorProto.FLOAT16))
        else:
            nodes.append(helper.make_node("Identity", [logits], ["logits"], name="output_node"))
        outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT16 if out_dtype == "f16" else TensorProto.FLOAT,
                                                 ["batch", num_labels])]
    else:
        # out_dtype f16: the output as an fp16 export gives it (float16 last_hidden_state; the graph itself stays
        # float32, as ONNX Runtime's CPU provider has few float16 kernels).
        if out_dtype == "f16":
            nodes.append(helper.make_node("Cast", [x], ["last_hidden_state"], name="output_node", to=TensorProto.FLOAT16))
        else:
            nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output_node"))
        outputs = [helper.make_tensor_value_info("last_hidden_state",
                                                 TensorProto.FLOAT16 if out_dtype == "f16" else TensorProto.FLOAT,
                                                 ["batch", "sequence", h])]

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    graph = helper.make_graph(nodes, "bert_" + preset, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="rlsearch/scripts/gen_bert.py")
    model.ir_version = 8  # ONNX 1.12 default; ORT >= 1.14 reads it
    onnx.checker.check_model(model)
    return model


def write_safetensors(path, tensors, dtype="f32"):
    """Writes {name: float32 array} in the safetensors format (8-byte
    little-endian header length, JSON header with dtype, shape and
    data_offsets, then the data), converting to F32, F16 or BF16 (round to
    nearest even). Written here from the format description, independently of
    the Go reader it tests."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        if dtype == "f32":
            b, tag = a.tobytes(), "F32"
        elif dtype == "f16":
            b, tag = a.astype(np.float16).tobytes(), "F16"
        elif dtype == "bf16":
            u = a.view(np.uint32).astype(np.uint64)
            u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
            b, tag = u.astype(np.uint16).tobytes(), "BF16"
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": tag, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the reference writer pads the header to 8 bytes
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)


def safetensors_files(state, dtype, shards):
    """name -> writer for model.safetensors, or for `shards` shard files and
    model.safetensors.index.json as save_pretrained writes them."""
    if shards <= 1:
        return {"model.safetensors": lambda path: write_safetensors(path, state, dtype)}
    names = sorted(state)
    files, weight_map = {}, {}
    for i in range(shards):
        fname = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
        part = {n: state[n] for n in names[i::shards]}
        weight_map.update({n: fname for n in part})
        files[fname] = (lambda p, part=part: write_safetensors(p, part, dtype))

    def index(path):
        with open(path, "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
    files["model.safetensors.index.json"] = index
    return files


def hf_state_dict(w):
    """The BertModel state dict of the weights: Hugging Face names, Linear
    weights [out, in]."""
    names = torch_names(w)
    out = {}
    for k, v in w.items():
        n = names[k]
        if n.startswith("onnx::MatMul_"):
            if k in ("pool.w", "cls.w"):
                n = {"pool.w": "pooler.dense.weight", "cls.w": "classifier.weight"}[k]
            else:
                layer, slot, _ = k.split(".")
                n = "encoder.layer.%s.%s.weight" % (layer[1:], _BERT_SLOTS[slot])
            v = v.T
        out[n] = v
    return out


def write_atomic(out, files):
    """files: name -> callable(path) writing that file. Builds a temporary
    sibling directory, then renames it onto out (replacing an older one)."""
    out = os.path.abspath(out)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + os.path.basename(out) + ".tmp-", dir=parent)
    try:
        for n, write in files.items():
            write(os.path.join(tmp, n))
        os.chmod(tmp, 0o755)
        old = None
        if os.path.exists(out):
            old = tempfile.mkdtemp(prefix="." + os.path.basename(out) + ".old-", dir=parent)
            os.rmdir(old)
            os.rename(out, old)
        os.rename(tmp, out)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def json_writer(obj):
    """A write_atomic entry writing obj as indented JSON."""
    def write(path):
        with open(path, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    return write


def model_dir_files(script, model, tokenizer, cfg, hf_cfg, rec):
    """The write_atomic entries of a generated model directory: model.onnx
    (the whole protobuf), a copy of the tokenizer, rlsearch.json (cfg),
    config.json (hf_cfg) and script.json (rec, what the reference reads)."""
    def save_model(path):
        with open(path, "wb") as f:
            f.write(model.SerializeToString())

    return {
        "model.onnx": save_model,
        "tokenizer.json": lambda path: shutil.copyfile(tokenizer, path),
        "rlsearch.json": json_writer(cfg),
        "config.json": json_writer(hf_cfg),
        script + ".json": json_writer(rec),
    }


def add_export_args(g, output):
    """The gen options both generators share, after their own: safetensors
    export and the output dtype (output: what --output-dtype f16 makes
    float16, with its verb)."""
    g.add_argument("--safetensors", default="", choices=["", "f32", "f16", "bf16"],
                   help="also write the state dict as model.safetensors in this dtype")
    g.add_argument("--shards", type=int, default=1, help="with --safetensors: shard files + index.json")
    g.add_argument("--output-dtype", default="f32", choices=["f32", "f16"],
                   help="f16: %s float16 (a Cast at the end), as in an fp16 export" % output)


def run_cli(ap, sub, argv, reference_help, gen, reference):
    """Adds the reference command to sub, parses argv and runs gen or
    reference on the arguments."""
    r = sub.add_parser("reference", help=reference_help)
    r.add_argument("--model", required=True)
    r.add_argument("--in", dest="inp", default="-")
    r.add_argument("--out", default="-")
    a = ap.parse_args(argv)
    if a.cmd == "gen":
        gen(a)
    else:
        reference(a)


def cmd_gen(a):
    if a.preset not in PRESETS:
        sys.exit("gen_bert: unknown preset %r (have %s)" % (a.preset, ", ".join(PRESETS)))
    if not os.path.isfile(a.tokenizer):
        sys.exit("gen_bert: tokenizer %s not found (run scripts/setup.sh)" % a.tokenizer)
    p = PRESETS[a.preset]
    w = make_weights(a.preset, a.seed, a.head, a.num_labels)
    model = build_graph(a.preset, w, a.head, a.num_labels, a.output_dtype)
    name = a.name or "gen-bert-%s-seed%d" % (a.preset, a.seed)
    if a.head:
        name = a.name or "gen-cross-%s-%dlabel-seed%d" % (a.preset, a.num_labels, a.seed)
    cfg = {
        "name": name,
        "dim": p["hidden"],
        "max_length": 256,  # Search-R1 / E5 retrieval convention
        "query_prefix": "query: ",  # E5 model card
        "passage_prefix": "passage: ",  # E5 model card
        "pooling": "mean",
        "normalize": True,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "last_hidden_state",
    }
    if a.head == "classifier":
        cfg = {
            "kind": "cross-encoder",
            "name": name,
            "max_length": 512,  # BERT position table
            "inputs": ["input_ids", "attention_mask", "token_type_ids"],
            "output": "logits",
            "activation": "none" if a.num_labels == 1 else "softmax",
            "label": 0 if a.num_labels == 1 else 1,
        }
    rec = dict(preset=a.preset, seed=a.seed, head=a.head, num_labels=a.num_labels, vocab=VOCAB, positions=POSITIONS,
               type_vocab=TYPE_VOCAB, ln_eps=LN_EPS, mask_neg=MASK_NEG, opset=OPSET, **p)
    files = model_dir_files("gen_bert", model, a.tokenizer, cfg, hf_config(p, a.head, a.num_labels), rec)
    if a.save_weights:
        files["weights.npz"] = lambda path: np.savez(path, **w)
    if a.safetensors:
        files.update(safetensors_files(hf_state_dict(w), a.safetensors, a.shards))
    write_atomic(a.out, files)
    print("gen_bert: wrote %s (%s, seed %d, %.1f MB model.onnx)" % (
        a.out, a.preset, a.seed, os.path.getsize(os.path.join(a.out, "model.onnx")) / 1e6),
        file=sys.stderr)


# ---------------------------------------------------------------------------
# Independent numpy reference (float64), not derived from the graph above
# ---------------------------------------------------------------------------


def np_layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def np_gelu(x):
    from math import erf
    verf = np.vectorize(erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + verf(x / math.sqrt(2.0)))


def np_forward(rec, w, ids, types):
    """One sequence, no padding: ids, types int arrays [S] -> hidden [S, H].

    Padding is excluded by construction, so the reference does not depend on
    the mask trick at all: a padded ONNX batch must reproduce it exactly."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    s = len(ids)
    nh = rec["heads"]
    h = rec["hidden"]
    hd = h // nh
    x = w["emb.word"][ids] + w["emb.pos"][np.arange(s)] + w["emb.type"][types]
    x = np_layer_norm(x, w["emb.ln.g"], w["emb.ln.b"], rec["ln_eps"])
    for l in range(rec["layers"]):
        pre = "l%d." % l
        q = (x @ w[pre + "q.w"] + w[pre + "q.b"]).reshape(s, nh, hd)
        k = (x @ w[pre + "k.w"] + w[pre + "k.b"]).reshape(s, nh, hd)
        v = (x @ w[pre + "v.w"] + w[pre + "v.b"]).reshape(s, nh, hd)
        ctx = np.empty((s, nh, hd))
        for head in range(nh):
            sc = q[:, head, :] @ k[:, head, :].T / math.sqrt(hd)
            sc = sc - sc.max(-1, keepdims=True)
            e = np.exp(sc)
            ctx[:, head, :] = (e / e.sum(-1, keepdims=True)) @ v[:, head, :]
        attn = ctx.reshape(s, h) @ w[pre + "ao.w"] + w[pre + "ao.b"]
        x = np_layer_norm(attn + x, w[pre + "ln1.g"], w[pre + "ln1.b"], rec["ln_eps"])
        f = np_gelu(x @ w[pre + "fi.w"] + w[pre + "fi.b"])
        f = f @ w[pre + "fo.w"] + w[pre + "fo.b"]
        x = np_layer_norm(f + x, w[pre + "ln2.g"], w[pre + "ln2.b"], rec["ln_eps"])
    return x


def cmd_reference(a):
    with open(os.path.join(a.model, "gen_bert.json")) as f:
        rec = json.load(f)
    with open(os.path.join(a.model, "rlsearch.json")) as f:
        cfg = json.load(f)
    npz = os.path.join(a.model, "weights.npz")
    if os.path.exists(npz):
        w = dict(np.load(npz))
    else:
        w = make_weights(rec["preset"], rec["seed"], rec.get("head", ""), rec.get("num_labels", 1))
    src = open(a.inp) if a.inp != "-" else sys.stdin
    with src:
        req = json.load(src)
    rows = req["input_ids"]
    masks = req.get("attention_mask") or [[1] * len(r) for r in rows]
    types = req.get("token_type_ids") or [[0] * len(r) for r in rows]
    embs = []
    for r, m, t in zip(rows, masks, types):
        if len(r) != len(m) or len(r) != len(t):
            sys.exit("gen_bert: row lengths differ between input_ids, attention_mask, token_type_ids")
        # Keep only attended positions: with an additive -10000 mask the masked
        # keys get weight exp(-10000) == 0, so this equals the masked forward.
        keep = [i for i, mv in enumerate(m) if mv]
        if not keep:
            embs.append([0.0] * rec["hidden"])
            continue
        if keep != list(range(len(keep))):
            sys.exit("gen_bert: reference supports right padding only")
        ids = np.asarray([r[i] for i in keep], np.int64)
        tt = np.asarray([t[i] for i in keep], np.int64)
        hid = np_forward(rec, w, ids, tt)
        if rec.get("head") == "classifier":
            wd = {k: v.astype(np.float64) for k, v in w.items()}
            pooled = np.tanh(hid[0] @ wd["pool.w"] + wd["pool.b"])
            embs.append([float(v) for v in pooled @ wd["cls.w"] + wd["cls.b"]])
            continue
        if cfg.get("pooling", "mean") == "mean":
            e = hid.mean(0)
        elif cfg["pooling"] == "cls":
            e = hid[0]
        else:
            sys.exit("gen_bert: unknown pooling %r" % cfg["pooling"])
        if cfg.get("normalize", True):
            n = np.linalg.norm(e)
            e = e / n if n > 0 else e
        embs.append([float(v) for v in e])
    out = {"embeddings": embs, "dim": rec["hidden"]}
    if rec.get("head") == "classifier":
        out = {"logits": embs, "num_labels": rec["num_labels"]}
    dst = open(a.out, "w") if a.out != "-" else sys.stdout
    with dst:
        json.dump(out, dst)
        dst.write("\n")


def main(argv):
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["gen"] + argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    g = sub.add_parser("gen", help="write a model directory")
    g.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--name", default="")
    g.add_argument("--tokenizer",
                   default=os.path.join(here, "..", ".cache", "tokenizers", "bert-uncased.json"))
    g.add_argument("--head", default="", choices=["", "classifier"],
                   help="classifier: BERT cross-encoder (pooler + classifier, output logits)")
    g.add_argument("--num-labels", type=int, default=1)
    g.add_argument("--save-weights", action="store_true",
                   help="also write weights.npz (reference regenerates from the seed otherwise)")
    add_export_args(g, "last_hidden_state is")
    run_cli(ap, sub, argv, "numpy reference embeddings", cmd_gen, cmd_reference)


if __name__ == "__main__":
    main(sys.argv[1:])
