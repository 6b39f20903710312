#!/usr/bin/env node
// Tokenizer parity oracle: Hugging Face tokenizers (Rust, 0.22.x) through the
// Node binding @anush008/tokenizers, installed by scripts/setup.sh under
// .cache/oracle. Used by tokenizer/wordpiece_test.go (TestWordPieceParityWithHF) and the BPE tests beside it.
//
// Modes:
//
//   node scripts/tokenizer_oracle.js encode < request.json
//     request: {"tokenizer": "/path/tokenizer.json", "max_len": 0,
//               "strings": ["<base64 of UTF-8 bytes>", ...]}
//     Each string is decoded with Buffer.toString('utf8'), so invalid UTF-8
//     becomes U+FFFD exactly as Go's range loop sees it. Padding is disabled;
//     truncation is disabled when max_len <= 0, else set to max_len tokens in
//     total (specials included, as tokenizers counts them).
//     reply (stdout): {"ids": [[101, ..., 102], ...]}
//     With "pretokenize": true the reply is {"pieces": [[piece, ...], ...]}:
//     the pre-tokenizer's output alone (rerank's splitter test).
//     With "pairs": [["<base64 a>", "<base64 b>"], ...] instead of
//     "strings", each pair is encoded as a sentence pair (rerank's
//     cross-encoder test) and the reply is {"ids": [[ids, type_ids], ...]}.
//
//   node scripts/tokenizer_oracle.js probe [tokenizer.json]
//     Runs every Unicode scalar value through each BertNormalizer step alone
//     and through BertPreTokenizer, and prints what the Rust tables say:
//     {"other": [[lo,hi],...], "space": [...], "cjk": [...], "punct": [...],
//      "split_ws": [...], "nonstarter": [...], "strip": {"cp": "out"},
//      "lower": {"cp": "out"}}, where nonstarter lists the characters with a
//      non-zero canonical combining class in tokenizers' NFD tables.
//     Used to find where Go's Unicode tables differ from the ones compiled
//     into tokenizers (see the exception tables in tokenizer/wordpiece.go).
//
// The oracle package directory comes from $TOKENIZER_ORACLE_DIR (the folder
// holding node_modules), else .cache/oracle next to this script's parent.
'use strict';

const path = require('path');
const fs = require('fs');

function loadTokenizers() {
  const dir = process.env.TOKENIZER_ORACLE_DIR ||
    path.join(__dirname, '..', '.cache', 'oracle');
  return require(path.join(dir, 'node_modules', '@anush008', 'tokenizers'));
}

function readStdin() {
  return fs.readFileSync(0, 'utf8');
}

async function encode() {
  const req = JSON.parse(readStdin());
  const { Tokenizer } = loadTokenizers();
  const tk = Tokenizer.fromFile(req.tokenizer);
  tk.disablePadding();
  if (req.max_len && req.max_len > 0) {
    tk.setTruncation(req.max_len);
  } else {
    tk.disableTruncation();
  }
  const dec = (b) => Buffer.from(b, 'base64').toString('utf8');
  const out = [];
  if (req.pairs) {
    // Sentence pairs (cross-encoders): truncation longest_first over both.
    for (const [a, b] of req.pairs) {
      const e = await tk.encode(dec(a), dec(b), { addSpecialTokens: true });
      out.push([e.getIds(), e.getTypeIds()]);
    }
    process.stdout.write(JSON.stringify({ ids: out }));
    return;
  }
  const texts = req.strings.map(dec);
  if (req.pretokenize) {
    // Only the tokenizer's pre-tokenizer: pieces in its output alphabet
    // (byte-level for Qwen3), no normalizer and no added-token split.
    const pre = tk.getPreTokenizer();
    for (const s of texts) out.push(pre.preTokenizeString(s).map((p) => p[0]));
    process.stdout.write(JSON.stringify({ pieces: out }));
    return;
  }
  // Batches keep memory flat and let tokenizers use its thread pool.
  const batch = 256;
  for (let i = 0; i < texts.length; i += batch) {
    const encs = await tk.encodeBatch(texts.slice(i, i + batch), { addSpecialTokens: true });
    for (const e of encs) out.push(e.getIds());
  }
  process.stdout.write(JSON.stringify({ ids: out }));
}

function probe() {
  const t = loadTokenizers();
  const only = (o) => t.bertNormalizer(Object.assign(
    { cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: false }, o));
  const clean = only({ cleanText: true });
  const cjk = only({ handleChineseChars: true });
  const strip = only({ stripAccents: true });
  const lower = only({ lowercase: true });
  const pre = t.bertPreTokenizer();
  const nfd = t.nfdNormalizer();

  const ranges = { other: [], space: [], cjk: [], punct: [], split_ws: [], nonstarter: [] };
  const add = (name, cp) => {
    const r = ranges[name];
    const last = r[r.length - 1];
    if (last && last[1] === cp - 1) last[1] = cp;
    else r.push([cp, cp]);
  };
  const strips = {};
  const lowers = {};
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    const cl = clean.normalizeString(c);
    if (cl === '') add('other', cp);
    else if (cl === ' ' && c !== ' ') add('space', cp);
    if (cjk.normalizeString(c) !== c) add('cjk', cp);
    const s = strip.normalizeString(c);
    if (s !== c) strips[cp] = s;
    const l = lower.normalizeString(c);
    if (l !== c) lowers[cp] = l;
    // A character with a combining class in (0, 240) moves in front of
    // U+0345 (ccc 240) under NFD; U+0345 itself is the only class 240.
    if (cp === 0x345 || nfd.normalizeString('\u0345' + c).startsWith(nfd.normalizeString(c))) add('nonstarter', cp);
    const p = pre.preTokenizeString('a' + c + 'a');
    if (p.length === 3) add('punct', cp);
    else if (p.length === 2) add('split_ws', cp);
  }
  process.stdout.write(JSON.stringify(Object.assign(ranges, { strip: strips, lower: lowers })));
}

const mode = process.argv[2];
if (mode === 'encode') {
  encode().catch((e) => { console.error(e); process.exit(1); });
} else if (mode === 'probe') {
  probe();
} else {
  console.error('usage: tokenizer_oracle.js encode < request.json | probe');
  process.exit(2);
}
