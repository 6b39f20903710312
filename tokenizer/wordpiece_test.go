package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"golang.org/x/text/unicode/norm"
)

// tokenizerPath is $BERT_TOKENIZER, else .cache/tokenizers/bert-uncased.json.
func tokenizerPath(t testing.TB) string {
	t.Helper()
	return testutil.NativeFile(t, "BERT_TOKENIZER", filepath.Join(".cache", "tokenizers", "bert-uncased.json"), "BERT tokenizer")
}

var testWP onceLoad[*WordPiece]

func loadTestWordPiece(t testing.TB) *WordPiece {
	t.Helper()
	return testWP.get(t, tokenizerPath(t), LoadWordPiece)
}

// normalizeOnly runs the non-ASCII normalization steps selected by w's
// flags on one character and returns what reaches the pre-tokenizer.
func normalizeOnly(w *WordPiece, r rune) []rune {
	var got []rune
	st := &wpState{collect: &got}
	if w.strip {
		w.stripped(st, r, w.prop(r))
		w.flushPending(st)
	} else {
		w.lowered(st, r, w.prop(r))
	}
	return got
}

// TestWordPieceUnicodeTablesMatchHF probes every Unicode scalar value
// through each BertNormalizer step and BertPreTokenizer in Rust and
// compares with the Go character classes, so that a difference between
// Go's Unicode tables and the ones compiled into tokenizers shows up here
// with its code point rather than as a rare parity failure.
func TestWordPieceUnicodeTablesMatchHF(t *testing.T) {
	if testing.Short() {
		t.Skip("probes 1.1M code points through node; skipped with -short")
	}
	cmd := testutil.OracleCmd(t, "probe")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle probe: %v\n%s", err, stderr.String())
	}
	var probe struct {
		Other      [][2]rune         `json:"other"`
		Space      [][2]rune         `json:"space"`
		CJK        [][2]rune         `json:"cjk"`
		Punct      [][2]rune         `json:"punct"`
		SplitWS    [][2]rune         `json:"split_ws"`
		NonStarter [][2]rune         `json:"nonstarter"`
		Strip      map[string]string `json:"strip"`
		Lower      map[string]string `json:"lower"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		t.Fatal(err)
	}
	toMap := func(m map[string]string) map[rune][]rune {
		res := make(map[rune][]rune, len(m))
		for k, v := range m {
			var cp rune
			if _, err := fmt.Sscan(k, &cp); err != nil {
				t.Fatal(err)
			}
			res[cp] = []rune(v)
		}
		return res
	}
	strip, lower := toMap(probe.Strip), toMap(probe.Lower)
	stripW := &WordPiece{strip: true, props: bmpProps()}
	lowerW := &WordPiece{lower: true, props: bmpProps()}
	prop := stripW.prop // the table Encode uses in the BMP

	type class struct {
		name string
		hf   [][2]rune
		got  func(rune) bool
	}
	classes := []class{
		{"clean_text drops", probe.Other, func(r rune) bool { return prop(r)&pDrop != 0 }},
		{"clean_text maps to space", probe.Space, func(r rune) bool { return r != ' ' && prop(r)&(pDrop|pCleanSpace) == pCleanSpace }},
		{"is_chinese_char", probe.CJK, func(r rune) bool { return prop(r)&pCJK != 0 }},
		{"is_bert_punc", probe.Punct, func(r rune) bool { return prop(r)&pPunct != 0 }},
		{"char::is_whitespace", probe.SplitWS, func(r rune) bool { return prop(r)&pSplit != 0 }},
		{"NFD combining class > 0", probe.NonStarter, func(r rune) bool {
			if d := norm.NFD.PropertiesString(string(r)).Decomposition(); d != nil {
				r, _ = utf8.DecodeRune(d)
			}
			return cccOf(r) != 0
		}},
	}
	var diffs []string
	for _, c := range classes {
		var bad []rune
		for r := rune(0); r <= utf8.MaxRune; r++ {
			if 0xD800 <= r && r <= 0xDFFF {
				continue
			}
			if inRanges(r, c.hf) != c.got(r) {
				bad = append(bad, r)
			}
		}
		if len(bad) > 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d code points differ (HF has them: %v): %s", c.name, len(bad), inRanges(bad[0], c.hf), runeRanges(bad)))
		}
	}
	for _, m := range []struct {
		name string
		hf   map[rune][]rune
		w    *WordPiece
	}{{"strip_accents", strip, stripW}, {"lowercase", lower, lowerW}} {
		var bad []string
		for r := rune(0x80); r <= utf8.MaxRune; r++ {
			if 0xD800 <= r && r <= 0xDFFF {
				continue
			}
			want, ok := m.hf[r]
			if !ok {
				want = []rune{r}
			}
			if got := normalizeOnly(m.w, r); !slices.Equal(got, want) {
				bad = append(bad, fmt.Sprintf("0x%X:{%s}/*go %q*/", r, runeList(want), string(got)))
			}
		}
		if len(bad) > 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d code points differ: %s", m.name, len(bad), strings.Join(bad, ", ")))
		}
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

func runeList(rs []rune) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "0x%X", r)
	}
	return b.String()
}

func runeRanges(rs []rune) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		fmt.Fprintf(&b, "{0x%X, 0x%X}, ", rs[i], rs[j])
		i = j + 1
	}
	return b.String()
}

// dataDir is the shared wiki_multihop data set (read in place, never
// copied into the repository).
func dataDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(testutil.RepoRoot(t), "..", "shared", "data", "wiki_multihop")
}

// readJSONLField returns field of every line of a JSON-lines file.
func readJSONLField(t testing.TB, path, field string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range bytes.Lines(data) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s, ok := m[field].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Fragments for the synthetic parity strings: each one exercises a step of
// the pipeline (see the WordPiece doc).
var parityFragments = []string{
	// ASCII words, numbers, punctuation and symbols.
	"Hello", "WORLD", "unaffable", "tokenization", "e-mail", "U.S.A.", "don't", "3.14159", "1,000,000", "C++", "#hashtag",
	"!!!", "?!", "...", "$+<=>^`|~", "(a)[b]{c}", "\\", `"quoted"`, "@user", "50%", "a_b_c", "x*y/z", "&amp;", "<br/>",
	// Accents, NFC and NFD forms, stacked marks, letters with compatibility forms.
	"café", "cafe\u0301", "naïve", "nai\u0308ve", "Ångström", "A\u030angstro\u0308m", "Tiếng Việt", "Ḍ̇", "o\u0323\u0302",
	"Crème brûlée", "ǅemal", "ﬁnance", "Å", "Ω", "K", "Ａｂｃ１２３", "ｶﾀｶﾅ", "Œuvre", "straße", "ŁÓDŹ", "Ærø",
	// CJK: unified, Extension A, B, C-F, compatibility, punctuation.
	"中文字符", "北京大学", "㐀㐁䶵", "𠀀𠀁𪚥", "𪜀𫝀𫠠𬺰", "豈更車", "丽𪘀", "。、「」", "〇", "⺀⺁", "ㄅㄆ",
	// Japanese, Korean.
	"ひらがな", "カタカナ", "東京タワー", "ｱｲｳ", "한국어", "서울특별시", "ㄱㄴㄷ", "각",
	// Emoji: plain, ZWJ, flags, skin tones, keycaps, newer.
	"😀", "👨\u200d👩\u200d👧\u200d👦", "🇺🇸🇯🇵", "👍🏽", "1️⃣", "🥰🫠", "❤️", "🏳️\u200d🌈",
	// Controls, Unicode spaces, zero-width and format characters.
	"\x00", "\x01\x07\x1b", "\x7f", "\u0085", "\u008d", "\t", "\n", "\r\n", "\v", "\f", "\u00a0", "\u2028", "\u2029",
	"\u3000", "\u2000\u2001\u200a", "\u202f", "\u205f", "\u1680", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060",
	"\ufeff", "\u00ad", "\u061c", "\u202e", "\ufff9", "\ue000", "\U000f0000", "\U000e0001", "\ufffd", "\ufffe",
	// Case: Greek final sigma, Turkish dotted and dotless i, titlecase.
	"ΟΔΟΣ", "Σίσυφος", "ς", "İstanbul", "ıi", "IĞDIR", "ﬀ", "ǈ", "ẞ",
	// Other scripts with combining marks.
	"Привет мир", "Ελληνικά", "مرحبا بالعالم", "مَرْحَبًا", "שָׁלוֹם", "नमस्ते", "हिन्दी", "สวัสดีครับ", "தமிழ்", "ქართული",
	"Հայերեն", "ትግርኛ", "ཀྵ", "ᏣᎳᎩ", "ᠮᠣᠩᠭᠣᠯ",
	// Unicode punctuation and symbols.
	"¿¡«»", "—–", "…", "‘’“”", "•§¶†‡", "€£¥", "∑∫≤", "①②", "©®™", "°C", "½", "※", "〽", "﹏", "‿⁀", "٪", "۔",
	// Added tokens inside text.
	"[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "a[MASK]b", "[[MASK]]", "[mask]", "[CLS][SEP]", "[MASK", "MASK]",
	// Characters where Go's Unicode 15 tables and tokenizers' disagree.
	"\u0890", "\u08e2", "\U00013430", "⹃", "\u2e52", "\u166d", "\U000111c9", "a\u1734b", "\U00011938", "a\u0898b",
	"a\u1ac0\u0301b", "\ua7cb\ua7cc", "\U00010d50\U00010d51", "\U00016ea0", "a\u1715\u0301", "\U00016ff0",
	"a\u1df6\u0334b", "\U0001d165\u0301\U0001d16d", "\u0f71\u0f72", "a\u0345\u0334",
	"a\u1df6\U00016ff0b", "a\U0001d165\u1b44b", "a\U0001d165\u0301\u1b44\u0334b", "\u1715\U0001d165",
	// Invalid UTF-8.
	"\xff", "\xc3\x28", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "ab\x80cd", "\xf4\x90\x80\x80",
}

// parityStrings builds the parity test set deterministically (fixed seed):
// passages and questions from the shared data set, edge cases, random mixes
// of parityFragments, random code points and random bytes.
func parityStrings(t testing.TB) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(20240601, 1))
	var out []string

	dir := dataDir(t)
	corpus := filepath.Join(dir, "corpus.jsonl")
	if _, err := os.Stat(corpus); err == nil {
		passages := readJSONLField(t, corpus, "contents")
		questions := readJSONLField(t, filepath.Join(dir, "questions.jsonl"), "question")
		for range 900 {
			out = append(out, passages[rng.IntN(len(passages))])
		}
		for range 300 {
			out = append(out, questions[rng.IntN(len(questions))])
		}
		// Very long text (> 10k characters).
		var long strings.Builder
		for long.Len() < 40000 {
			long.WriteString(passages[rng.IntN(len(passages))])
			long.WriteString(" ")
		}
		out = append(out, long.String())
	} else {
		t.Logf("shared data set not found at %s: synthetic strings only", dir)
	}

	frags := parityFragments
	// Each fragment alone, next to letters, and NFD/NFC forms of it.
	for _, f := range frags {
		out = append(out, f, "x"+f+"y", "Foo "+f+" bar.", norm.NFD.String(f), norm.NFC.String(f))
	}
	// Edge cases.
	out = append(out, "", " ", "\x00", "[CLS]", strings.Repeat("a", 100), strings.Repeat("a", 101),
		strings.Repeat("é", 100), strings.Repeat("é", 101), strings.Repeat("e\u0301", 101),
		strings.Repeat("super", 30), "pre "+strings.Repeat("x", 150)+" post", strings.Repeat("中", 300),
		strings.Repeat("ab ", 5000), strings.Repeat("!", 12000), strings.Repeat("İ", 60), strings.Repeat("a\u0301", 60))
	// Random mixes of fragments.
	seps := []string{"", " ", "  ", "\n", ",", "-", "\u00a0", "\u3000", "\t", "."}
	for range 900 {
		var b strings.Builder
		for k := rng.IntN(12) + 1; k > 0; k-- {
			b.WriteString(frags[rng.IntN(len(frags))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		out = append(out, b.String())
	}
	// Random code points: anywhere, in the BMP, and in the blocks above.
	for i := range 400 {
		var b strings.Builder
		for k := rng.IntN(20) + 1; k > 0; k-- {
			var r rune
			switch i % 4 {
			case 0:
				r = rng.Int32N(utf8.MaxRune + 1)
			case 1:
				r = rng.Int32N(0x10000)
			case 2:
				r = 0x80 + rng.Int32N(0x3000-0x80)
			default:
				r = 0x10000 + rng.Int32N(0x30000-0x10000)
			}
			if 0xD800 <= r && r <= 0xDFFF {
				r = 'a'
			}
			b.WriteRune(r)
			if rng.IntN(4) == 0 {
				b.WriteString("ab")
			}
		}
		out = append(out, b.String())
	}
	// Random bytes, mostly invalid UTF-8.
	for range 150 {
		buf := make([]byte, rng.IntN(24)+1)
		for j := range buf {
			if rng.IntN(3) == 0 {
				buf[j] = byte('a' + rng.IntN(26))
			} else {
				buf[j] = byte(rng.IntN(256))
			}
		}
		out = append(out, string(buf))
	}
	return out
}

func decodeIDs(w *WordPiece, ids []int32) []string {
	inv := make(map[int32]string, len(w.vocab))
	for tok, id := range w.vocab {
		inv[id] = tok
	}
	for _, at := range w.specials {
		inv[at.id] = at.content
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		tok, ok := inv[id]
		if !ok {
			tok = fmt.Sprintf("<%d>", id)
		}
		out[i] = tok
	}
	return out
}

// TestWordPieceParityWithHF compares Encode with Hugging Face tokenizers
// (Rust, through scripts/tokenizer_oracle.js) on more than 2,000 strings,
// without truncation and with truncation at 256 ids.
func TestWordPieceParityWithHF(t *testing.T) {
	tokPath := tokenizerPath(t)
	w := loadTestWordPiece(t)
	texts := parityStrings(t)
	if len(texts) < 2000 {
		t.Fatalf("only %d parity strings, want >= 2000", len(texts))
	}
	for _, maxLen := range []int{0, 256} {
		t.Run(fmt.Sprintf("maxLen=%d", maxLen), func(t *testing.T) {
			want := testutil.OracleEncode(t, tokPath, texts, maxLen)
			bad := 0
			for i, s := range texts {
				got := w.Encode(s, maxLen)
				if slices.Equal(got, want[i]) {
					continue
				}
				bad++
				if bad <= 5 {
					q := s
					if len(q) > 300 {
						q = q[:300] + "..."
					}
					t.Errorf("string %d %q:\n  go: %v\n      %q\n  hf: %v\n      %q", i, q, got, decodeIDs(w, got), want[i], decodeIDs(w, want[i]))
				}
			}
			t.Logf("maxLen=%d: %d of %d strings match Hugging Face tokenizers", maxLen, len(texts)-bad, len(texts))
			if bad > 0 {
				t.Errorf("%d of %d strings differ", bad, len(texts))
			}
		})
	}
}

// TestWordPieceOptionsParityWithHF checks the normalizer options that
// bert-uncased does not use (cased models, strip_accents without
// lowercase, no clean_text, no CJK padding) by rewriting its normalizer
// and comparing with the oracle on the synthetic strings.
func TestWordPieceOptionsParityWithHF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the oracle once per option set; skipped with -short")
	}
	tokPath := tokenizerPath(t)
	data, err := os.ReadFile(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range parityStrings(t) {
		if len(s) < 2000 { // the synthetic ones and short passages
			texts = append(texts, s)
		}
	}
	for _, tc := range []struct {
		name string
		norm string
	}{
		{"cased", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":false}`},
		{"strip_no_lower", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":true,"lowercase":false}`},
		{"lower_no_strip", `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":false,"lowercase":true}`},
		{"no_clean_no_cjk", `{"type":"BertNormalizer","clean_text":false,"handle_chinese_chars":false,"strip_accents":null,"lowercase":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tj map[string]json.RawMessage
			if err := json.Unmarshal(data, &tj); err != nil {
				t.Fatal(err)
			}
			tj["normalizer"] = json.RawMessage(tc.norm)
			out, err := json.Marshal(tj)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := LoadWordPiece(path)
			if err != nil {
				t.Fatal(err)
			}
			want := testutil.OracleEncode(t, path, texts, 0)
			bad := 0
			for i, s := range texts {
				if got := w.Encode(s, 0); !slices.Equal(got, want[i]) {
					bad++
					if bad <= 5 {
						t.Errorf("%q:\n  go: %q\n  hf: %q", s, decodeIDs(w, got), decodeIDs(w, want[i]))
					}
				}
			}
			t.Logf("%s: %d of %d strings match", tc.name, len(texts)-bad, len(texts))
		})
	}
}

// TestWordPieceEncodeTable pins known tokenizations of bert-base-uncased
// (the model card's examples and each pipeline step), decoded to tokens so
// that a failure says which step went wrong.
func TestWordPieceEncodeTable(t *testing.T) {
	w := loadTestWordPiece(t)
	for _, tc := range []struct {
		name   string
		text   string
		maxLen int
		want   string // space-separated tokens
	}{
		{"empty", "", 0, "[CLS] [SEP]"},
		{"lowercase and punctuation", "Hello, World!", 0, "[CLS] hello , world ! [SEP]"},
		{"wordpiece continuation", "unaffable", 0, "[CLS] una ##ffa ##ble [SEP]"},
		{"ascii symbols isolated", "$5+3=8", 0, "[CLS] $ 5 + 3 = 8 [SEP]"},
		{"accents stripped NFC", "Café naïve", 0, "[CLS] cafe naive [SEP]"},
		{"accents stripped NFD", "Cafe\u0301", 0, "[CLS] cafe [SEP]"},
		{"cjk padded", "中文abc", 0, "[CLS] 中 文 abc [SEP]"},
		{"turkish dotted I", "İstanbul", 0, "[CLS] istanbul [SEP]"},
		{"final sigma lowercases to sigma", "ΟΔΟΣ", 0, "[CLS] ο ##δ ##ο ##σ [SEP]"},
		{"unicode punctuation isolated", "«quote»", 0, "[CLS] « quote » [SEP]"},
		{"controls and invalid utf8 dropped", "a\x00b\x01c\xffd\ufffde", 0, "[CLS] abc ##de [SEP]"},
		{"unicode spaces split", "a\u00a0b\u3000c\u2028d", 0, "[CLS] a b c d [SEP]"},
		{"zero-width dropped", "a\u200bb\ufeffc", 0, "[CLS] abc [SEP]"},
		{"added token in text", "a [MASK] b[SEP]", 0, "[CLS] a [MASK] b [SEP] [SEP]"},
		{"added tokens are case-sensitive", "[mask]", 0, "[CLS] [ mask ] [SEP]"},
		{"unknown piece makes the word unk", "ab☃cd ok", 0, "[CLS] [UNK] ok [SEP]"},
		{"101 chars is unk", strings.Repeat("a", 101), 0, "[CLS] [UNK] [SEP]"},
		{"truncate keeps sep", "one two three four", 4, "[CLS] one two [SEP]"},
		{"truncate exact", "one two", 4, "[CLS] one two [SEP]"},
		{"truncate inside a word", "unaffable", 3, "[CLS] una [SEP]"},
		{"maxLen 2", "one two", 2, "[CLS] [SEP]"},
		{"maxLen 1 clamps to 2", "one two", 1, "[CLS] [SEP]"},
		{"maxLen negative means none", "one two", -1, "[CLS] one two [SEP]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(decodeIDs(w, w.Encode(tc.text, tc.maxLen)), " ")
			if got != tc.want {
				t.Errorf("Encode(%q, %d) = %s, want %s", tc.text, tc.maxLen, got, tc.want)
			}
		})
	}
	// max_input_chars_per_word is 100: a 100-character word is split into
	// pieces, not replaced by [UNK].
	if ids := w.Encode(strings.Repeat("a", 100), 0); slices.Contains(ids, w.unk) || len(ids) < 4 {
		t.Errorf("100-character word: %q, want pieces without [UNK]", decodeIDs(w, ids))
	}
}

func TestWordPieceAccessors(t *testing.T) {
	w := loadTestWordPiece(t)
	if got, want := w.VocabSize(), 30522; got != want {
		t.Errorf("VocabSize() = %d, want %d (bert-base-uncased vocab.txt)", got, want)
	}
	if got, want := w.PadID(), int32(0); got != want {
		t.Errorf("PadID() = %d, want %d ([PAD] is id 0 in bert-base-uncased)", got, want)
	}
}

// minimalTokenizer is a valid tokenizer.json with a tiny vocabulary.
const minimalTokenizer = `{
  "added_tokens": [{"id": 0, "content": "[PAD]", "special": true}, {"id": 1, "content": "[UNK]", "special": true},
    {"id": 2, "content": "[CLS]", "special": true}, {"id": 3, "content": "[SEP]", "special": true}],
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 5,
    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "a": 4, "##b": 5, "ab": 6, "##c": 7, "!": 8}}
}`

// TestLoadWordPieceErrors checks that each unsupported or malformed
// tokenizer.json is refused with the right sentinel.
func TestLoadWordPieceErrors(t *testing.T) {
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(minimalTokenizer), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sub := func(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }
	for _, tc := range []struct {
		name string
		json string
		want error
	}{
		{"valid", minimalTokenizer, nil},
		{"not json", "{", ErrBadTokenizer},
		{"bpe model", edit(func(m map[string]any) { sub(m, "model")["type"] = "BPE" }), ErrUnsupportedTokenizer},
		{"no model", edit(func(m map[string]any) { delete(m, "model") }), ErrBadTokenizer},
		{"empty vocab", edit(func(m map[string]any) { sub(m, "model")["vocab"] = map[string]any{} }), ErrBadTokenizer},
		{"unk not in vocab", edit(func(m map[string]any) { sub(m, "model")["unk_token"] = "<unk>" }), ErrBadTokenizer},
		{"sequence normalizer", edit(func(m map[string]any) { sub(m, "normalizer")["type"] = "Sequence" }), ErrUnsupportedTokenizer},
		{"null normalizer", edit(func(m map[string]any) { m["normalizer"] = nil }), ErrUnsupportedTokenizer},
		{"whitespace pre-tokenizer", edit(func(m map[string]any) { sub(m, "pre_tokenizer")["type"] = "Whitespace" }), ErrUnsupportedTokenizer},
		{"null post-processor", edit(func(m map[string]any) { m["post_processor"] = nil }), ErrUnsupportedTokenizer},
		{"roberta post-processor", edit(func(m map[string]any) { sub(m, "post_processor")["type"] = "RobertaProcessing" }), ErrUnsupportedTokenizer},
		{"template without sequence", edit(func(m map[string]any) {
			pp := sub(m, "post_processor")
			pp["single"] = pp["single"].([]any)[:1]
		}), ErrUnsupportedTokenizer},
		{"missing special token ids", edit(func(m map[string]any) { sub(m, "post_processor")["special_tokens"] = map[string]any{} }), ErrBadTokenizer},
		{"normalized added token", edit(func(m map[string]any) {
			m["added_tokens"].([]any)[0].(map[string]any)["normalized"] = true
		}), ErrUnsupportedTokenizer},
		{"no pad token", edit(func(m map[string]any) {
			m["added_tokens"] = m["added_tokens"].([]any)[1:]
			delete(sub(m, "model")["vocab"].(map[string]any), "[PAD]")
		}), ErrBadTokenizer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := LoadWordPiece(path)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("LoadWordPiece: error %v, want %v", err, tc.want)
			}
			if err == nil && w == nil {
				t.Fatal("nil WordPiece without error")
			}
		})
	}
	if _, err := LoadWordPiece(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
}

// TestWordPieceMinimal runs the algorithm on a tiny vocabulary without any
// downloaded file: greedy longest match, the per-word [UNK], the
// max_input_chars_per_word limit, and VocabSize/PadID.
func TestWordPieceMinimal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte(minimalTokenizer), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWordPiece(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.VocabSize() != 9 || w.PadID() != 0 {
		t.Fatalf("VocabSize() = %d, PadID() = %d, want 9, 0", w.VocabSize(), w.PadID())
	}
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"", []int32{2, 3}},
		{"ab", []int32{2, 6, 3}},         // longest match "ab", not "a" "##b"
		{"abc", []int32{2, 6, 7, 3}},     // ab ##c
		{"ABC!", []int32{2, 6, 7, 8, 3}}, // lowercase, "!" isolated
		{"abd", []int32{2, 1, 3}},        // "##d" unknown: the whole word is [UNK]
		{"ab abbbb", []int32{2, 6, 6, 5, 5, 5, 3}},
		{"abbbbb", []int32{2, 1, 3}},    // 6 characters > max_input_chars_per_word 5
		{"[CLS]a", []int32{2, 2, 4, 3}}, // added token in the text
		{"Äb", []int32{2, 6, 3}},        // accent stripped
	} {
		if got := w.Encode(tc.text, 0); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestWordPieceConcurrent encodes from many goroutines (run with -race):
// the pooled scratch state must not leak between calls.
func TestWordPieceConcurrent(t *testing.T) {
	w := loadTestWordPiece(t)
	texts := []string{"Hello, World!", "中文 İstanbul café", strings.Repeat("unaffable ", 50), "", "[MASK] x"}
	want := make([][]int32, len(texts))
	for i, s := range texts {
		want[i] = w.Encode(s, 0)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 200 {
				i := (g + k) % len(texts)
				if got := w.Encode(texts[i], 0); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Encode(%q) = %v, want %v", texts[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzWordPieceEncode checks the invariants of Encode on any input: no
// panic, [CLS] first and [SEP] last, ids in range, maxLen respected (1 and
// 2 both give at most 2 ids), and truncation is a prefix of the full
// encoding. Seeds live in testdata/fuzz/FuzzWordPieceEncode.
func FuzzWordPieceEncode(f *testing.F) {
	w := loadTestWordPiece(f)
	for _, s := range []string{"", "Hello, World!", "café\u0301 中文 [MASK]", "\xff\xfe", "İΣ\u200d👨‍👩‍👧"} {
		f.Add(s, int16(0))
		f.Add(s, int16(3))
	}
	f.Fuzz(func(t *testing.T, s string, maxLen int16) {
		full := w.Encode(s, 0)
		got := w.Encode(s, int(maxLen))
		if len(got) < 2 || got[0] != w.cls || got[len(got)-1] != w.sep {
			t.Fatalf("Encode(%q, %d) = %v: want [CLS] ... [SEP]", s, maxLen, got)
		}
		for _, id := range got {
			if id < 0 || int(id) >= w.VocabSize() {
				t.Fatalf("Encode(%q, %d) has id %d outside [0, %d)", s, maxLen, id, w.VocabSize())
			}
		}
		if maxLen > 0 && len(got) > max(int(maxLen), 2) {
			t.Fatalf("Encode(%q, %d) has %d ids", s, maxLen, len(got))
		}
		if maxLen <= 0 && !slices.Equal(got, full) {
			t.Fatalf("Encode(%q, %d) = %v, differs from maxLen 0: %v", s, maxLen, got, full)
		}
		if n := len(got) - 1; !slices.Equal(got[:n], full[:n]) {
			t.Fatalf("Encode(%q, %d) = %v is not a prefix of %v", s, maxLen, got, full)
		}
	})
}

// BenchmarkWordPieceEncode measures throughput on real passages and
// questions of the shared data set (MB/s of UTF-8 input).
func BenchmarkWordPieceEncode(b *testing.B) {
	w := loadTestWordPiece(b)
	dir := dataDir(b)
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		b.Skipf("shared data set not found at %s", dir)
	}
	passages := readJSONLField(b, filepath.Join(dir, "corpus.jsonl"), "contents")[:2000]
	questions := readJSONLField(b, filepath.Join(dir, "questions.jsonl"), "question")
	for _, bc := range []struct {
		name   string
		texts  []string
		maxLen int
	}{
		{"passages/maxLen=0", passages, 0},
		{"passages/maxLen=512", passages, 512},
		{"questions/maxLen=0", questions, 0},
		{"unicode-fragments/maxLen=0", parityFragments, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var n int64
			for _, s := range bc.texts {
				n += int64(len(s))
			}
			b.SetBytes(n)
			tokens := 0
			for b.Loop() {
				for _, s := range bc.texts {
					tokens += len(w.Encode(s, bc.maxLen))
				}
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// ExampleWordPiece_Encode tokenizes with a tiny tokenizer.json (real models
// load theirs the same way, e.g. .cache/tokenizers/bert-uncased.json).
func ExampleWordPiece_Encode() {
	dir, err := os.MkdirTemp("", "wordpiece")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(path, []byte(minimalTokenizer), 0o644); err != nil {
		panic(err)
	}
	tok, err := LoadWordPiece(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Encode("ABC! Äb", 0))     // [CLS] ab ##c ! ab [SEP]
	fmt.Println(tok.Encode("ABC! Äb", 4))     // truncated, [SEP] kept last
	fmt.Println(tok.PadID(), tok.VocabSize()) // for padding batches and checking ids
	// Output:
	// [2 6 7 8 6 3]
	// [2 6 7 3]
	// 0 9
}
