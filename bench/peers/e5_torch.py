#!/usr/bin/python3
"""The E5 query encoder of a Search-R1-style retrieval server, in plain torch: the dense peer's encoder.

Search-R1's retrieval server (search_r1/search/retrieval_server.py, class Encoder) loads the E5 checkpoint
with transformers' AutoModel and AutoTokenizer, tokenizes the request's queries with the "query: " prefix
(padding to the longest, truncation at max_length 256), runs the BertModel under no_grad, mean-pools
last_hidden_state over the attention mask and L2-normalises. Debian packages torch (python3-torch 1.13.1)
but not transformers or tokenizers, so this module does the same work from the same files a user has:

  config.json         Hugging Face BertConfig: layers, hidden size, heads, intermediate size, eps
  model.safetensors   the BertModel state dict (Hugging Face names, Linear weights [out, in]; F32, F16
                      or BF16, widened to float32 as AutoModel does on the CPU)
  tokenizer.json      BERT uncased: BertNormalizer (clean text, CJK spacing, lowercase, strip accents),
                      BertPreTokenizer (whitespace, punctuation), WordPiece (## continuation, words over
                      100 characters are [UNK]), [CLS] A [SEP]
  rlsearch.json       query prefix, max_length, pooling, normalize (E5: "query: ", 256, mean, true)

The forward pass is written here as a torch module (embeddings + LayerNorm; per layer self-attention with
the additive mask (1 - mask) * -10000 of the original BERT, residual + LayerNorm, exact erf GELU FFN,
residual + LayerNorm), fp32, torch.inference_mode. The same weights in model.onnx are what our server runs;
bench/peers' TestTorchEncoderAgrees checks token ids equal and embeddings within cosine 0.9999 of ours.

  e5_torch.py embed --model DIR < texts.jsonl > out.json   (one JSON string per line; writes
      {"ids": [[int]], "embeddings": [[float]]}: the check's command)
"""
import json
import math
import os
import struct
import sys
import unicodedata

import numpy as np
import torch
import torch.nn.functional as F

MASK_NEG = -10000.0  # the original BERT code's additive mask value, as the model's ONNX graph


# --------------------------------------------------------------------------------------------------------------
# Tokenizer: BERT uncased from tokenizer.json
# --------------------------------------------------------------------------------------------------------------


def _is_punct(ch):
    cp = ord(ch)
    # BERT's _is_punctuation: every non-alphanumeric ASCII character counts, plus Unicode category P*.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        m = t["model"]
        if m.get("type") != "WordPiece":
            raise ValueError("%s: model type %r, want WordPiece" % (path, m.get("type")))
        self.vocab = m["vocab"]
        self.unk = self.vocab[m.get("unk_token", "[UNK]")]
        self.prefix = m.get("continuing_subword_prefix", "##")
        self.max_chars = m.get("max_input_chars_per_word", 100)
        n = t.get("normalizer") or {}
        self.clean = n.get("clean_text", True)
        self.cjk = n.get("handle_chinese_chars", True)
        self.lower = n.get("lowercase", True)
        sa = n.get("strip_accents")
        self.strip = self.lower if sa is None else sa  # BertNormalizer: strip_accents None follows lowercase
        self.cls, self.sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        # Added tokens are matched in the raw text before normalisation (their "normalized" is false).
        self.added = sorted((a["content"] for a in t.get("added_tokens", []) if not a.get("normalized", True)),
                            key=len, reverse=True)
        self.added_ids = {a["content"]: a["id"] for a in t.get("added_tokens", [])}

    def _normalize(self, s):
        out = []
        for ch in s:
            cp = ord(ch)
            if self.clean:
                if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r"):
                    continue
                if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
                    ch = " "
            if self.cjk and _is_cjk(cp):
                out.append(" " + ch + " ")
            else:
                out.append(ch)
        s = "".join(out)
        if self.lower:
            s = s.lower()
        if self.strip:
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
        return s

    def _words(self, s):
        words, cur = [], []
        for ch in s:
            if ch.isspace():
                if cur:
                    words.append("".join(cur))
                    cur = []
            elif _is_punct(ch):
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(ch)
            else:
                cur.append(ch)
        if cur:
            words.append("".join(cur))
        return words

    def _wordpiece(self, w):
        if len(w) > self.max_chars:
            return [self.unk]
        ids, start = [], 0
        while start < len(w):
            end, found = len(w), None
            while start < end:
                piece = w[start:end] if start == 0 else self.prefix + w[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

    def _split_added(self, s):
        if not self.added:
            return [(False, s)]
        parts, i, last = [], 0, 0
        while i < len(s):
            for a in self.added:
                if s.startswith(a, i):
                    if last < i:
                        parts.append((False, s[last:i]))
                    parts.append((True, a))
                    i += len(a)
                    last = i
                    break
            else:
                i += 1
        if last < len(s):
            parts.append((False, s[last:]))
        return parts

    def encode(self, text, max_length):
        ids = []
        for special, part in self._split_added(text):
            if special:
                ids.append(self.added_ids[part])
                continue
            for w in self._words(self._normalize(part)):
                ids.extend(self._wordpiece(w))
        return [self.cls] + ids[:max_length - 2] + [self.sep]


# --------------------------------------------------------------------------------------------------------------
# Weights: model.safetensors
# --------------------------------------------------------------------------------------------------------------


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        buf = raw[base + a:base + b]
        dt = meta["dtype"]
        if dt == "F32":
            arr = np.frombuffer(buf, dtype="<f4")
        elif dt == "F16":
            arr = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            arr = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError("%s: tensor %s has dtype %s (want F32, F16 or BF16)" % (path, name, dt))
        out[name] = torch.from_numpy(arr.reshape(meta["shape"]).copy())
    return out


# --------------------------------------------------------------------------------------------------------------
# The BertModel forward pass
# --------------------------------------------------------------------------------------------------------------


class Bert(torch.nn.Module):
    def __init__(self, cfg, state):
        super().__init__()
        self.layers = cfg["num_hidden_layers"]
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.eps = cfg.get("layer_norm_eps", 1e-12)
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError("hidden_act %r: only gelu (exact erf) is written here" % cfg.get("hidden_act"))
        self.w = {}
        for k, v in state.items():
            if k.startswith("bert."):
                k = k[len("bert."):]
            self.w[k] = v

    def _get(self, name):
        if name not in self.w:
            raise KeyError("model.safetensors has no tensor %s" % name)
        return self.w[name]

    def _ln(self, x, base):
        return F.layer_norm(x, (self.hidden,), self._get(base + ".weight"), self._get(base + ".bias"), self.eps)

    def _lin(self, x, base):
        return F.linear(x, self._get(base + ".weight"), self._get(base + ".bias"))

    def forward(self, ids, mask):
        b, s = ids.shape
        pos = torch.arange(s).unsqueeze(0).expand(b, s)
        x = (F.embedding(ids, self._get("embeddings.word_embeddings.weight"))
             + F.embedding(pos, self._get("embeddings.position_embeddings.weight"))
             + F.embedding(torch.zeros_like(ids), self._get("embeddings.token_type_embeddings.weight")))
        x = self._ln(x, "embeddings.LayerNorm")
        add = ((1.0 - mask.to(x.dtype)) * MASK_NEG)[:, None, None, :]
        hd = self.hidden // self.heads
        for i in range(self.layers):
            p = "encoder.layer.%d." % i

            def split(t):
                return t.view(b, s, self.heads, hd).transpose(1, 2)

            q = split(self._lin(x, p + "attention.self.query"))
            k = split(self._lin(x, p + "attention.self.key"))
            v = split(self._lin(x, p + "attention.self.value"))
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + add, dim=-1)
            ctx = (att @ v).transpose(1, 2).reshape(b, s, self.hidden)
            x = self._ln(self._lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = F.gelu(self._lin(x, p + "intermediate.dense"))
            x = self._ln(self._lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x


class Encoder:
    """Encodes query texts as Search-R1's Encoder does for E5 on the CPU (fp32)."""

    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            cfg = json.load(f)
        rl = {}
        p = os.path.join(model_dir, "rlsearch.json")
        if os.path.exists(p):
            with open(p) as f:
                rl = json.load(f)
        self.prefix = rl.get("query_prefix", "query: ")
        self.max_length = rl.get("max_length", 256)
        self.normalize = rl.get("normalize", True)
        if rl.get("pooling", "mean") != "mean":
            raise ValueError("pooling %r: only mean (E5) is written here" % rl.get("pooling"))
        st = os.path.join(model_dir, "model.safetensors")
        if not os.path.exists(st):
            raise FileNotFoundError("%s: the torch peer loads model.safetensors (gen_bert.py --safetensors f32)" % st)
        self.tok = Tokenizer(os.path.join(model_dir, "tokenizer.json"))
        self.model = Bert(cfg, read_safetensors(st))
        self.dim = cfg["hidden_size"]

    def token_ids(self, texts):
        return [self.tok.encode(self.prefix + t, self.max_length) for t in texts]

    def encode(self, texts):
        """[len(texts), dim] float32 C-contiguous (faiss's input)."""
        rows = self.token_ids(texts)
        n = max(len(r) for r in rows)
        ids = torch.zeros((len(rows), n), dtype=torch.long)
        mask = torch.zeros((len(rows), n), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            mask[i, :len(r)] = 1
        with torch.inference_mode():
            h = self.model(ids, mask)
            m = mask.unsqueeze(-1).to(h.dtype)
            e = (h * m).sum(1) / m.sum(1)
            if self.normalize:
                e = F.normalize(e, dim=-1)
        return np.ascontiguousarray(e.numpy(), dtype=np.float32)


def main(argv):
    if len(argv) != 3 or argv[0] != "embed" or argv[1] != "--model":
        sys.exit("usage: e5_torch.py embed --model DIR < texts.jsonl > out.json")
    enc = Encoder(argv[2])
    texts = [json.loads(line) for line in sys.stdin if line.strip()]
    emb = enc.encode(texts) if texts else np.zeros((0, enc.dim), np.float32)
    json.dump({"ids": enc.token_ids(texts), "embeddings": emb.tolist()}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
