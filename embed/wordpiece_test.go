package embed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// requireNative skips the test when an outside resource (a downloaded
// model file, the Node oracle, a native library) is missing, telling the
// reader to run `make setup`; with RLSEARCH_REQUIRE_NATIVE=1 (set in CI) it
// fails instead, so that a broken setup cannot pass silently.
func requireNative(t testing.TB, what string) {
	t.Helper()
	msg := fmt.Sprintf("%s is missing; run `make setup` (scripts/setup.sh) to install it", what)
	if os.Getenv("RLSEARCH_REQUIRE_NATIVE") == "1" {
		t.Fatal(msg + " (RLSEARCH_REQUIRE_NATIVE=1)")
	}
	t.Skip(msg)
}

// repoRoot walks up from the working directory (the package directory
// under go test) to the directory holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// tokenizerPath is $BERT_TOKENIZER, else .cache/tokenizers/bert-uncased.json.
func tokenizerPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv("BERT_TOKENIZER")
	if p == "" {
		p = filepath.Join(repoRoot(t), ".cache", "tokenizers", "bert-uncased.json")
	}
	if _, err := os.Stat(p); err != nil {
		requireNative(t, "BERT tokenizer "+p)
	}
	return p
}

var (
	testWPOnce sync.Once
	testWP     *WordPiece
	testWPErr  error
)

func loadTestWordPiece(t testing.TB) *WordPiece {
	t.Helper()
	p := tokenizerPath(t)
	testWPOnce.Do(func() { testWP, testWPErr = LoadWordPiece(p) })
	if testWPErr != nil {
		t.Fatal(testWPErr)
	}
	return testWP
}

// oracleCmd returns the command running scripts/tokenizer_oracle.js with
// the given mode, skipping (or failing, see requireNative) without node or
// the oracle package. $TOKENIZER_ORACLE_DIR overrides .cache/oracle.
func oracleCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	root := repoRoot(t)
	dir := os.Getenv("TOKENIZER_ORACLE_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "oracle")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		requireNative(t, "node (for the tokenizer oracle)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anush008", "tokenizers")); err != nil {
		requireNative(t, "tokenizer oracle "+dir+"/node_modules/@anush008/tokenizers")
	}
	cmd := exec.Command(node, append([]string{filepath.Join(root, "scripts", "tokenizer_oracle.js")}, args...)...)
	cmd.Env = append(os.Environ(), "TOKENIZER_ORACLE_DIR="+dir)
	return cmd
}

// oracleEncode returns Hugging Face tokenizers' ids for each text.
func oracleEncode(t testing.TB, tokPath string, texts []string, maxLen int) [][]int32 {
	t.Helper()
	req := struct {
		Tokenizer string   `json:"tokenizer"`
		MaxLen    int      `json:"max_len"`
		Strings   []string `json:"strings"`
	}{Tokenizer: tokPath, MaxLen: maxLen}
	for _, s := range texts {
		req.Strings = append(req.Strings, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := oracleCmd(t, "encode")
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tokenizer oracle: %v\n%s", err, stderr.String())
	}
	var resp struct {
		IDs [][]int32 `json:"ids"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("tokenizer oracle reply: %v", err)
	}
	if len(resp.IDs) != len(texts) {
		t.Fatalf("tokenizer oracle returned %d results for %d strings", len(resp.IDs), len(texts))
	}
	return resp.IDs
}

// normalizeOnly runs the non-ASCII normalization steps selected by w's
// flags on one character and returns what reaches the pre-tokenizer.
func normalizeOnly(w *WordPiece, r rune) []rune {
	var got []rune
	st := &wpState{collect: &got}
	if w.strip {
		w.stripped(st, r)
		w.flushPending(st)
	} else {
		w.lowered(st, r)
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
	cmd := oracleCmd(t, "probe")
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
	stripW := &WordPiece{strip: true}
	lowerW := &WordPiece{lower: true}

	type class struct {
		name string
		hf   [][2]rune
		got  func(rune) bool
	}
	classes := []class{
		{"clean_text drops", probe.Other, func(r rune) bool { return r == 0xFFFD || isOther(r) }},
		{"clean_text maps to space", probe.Space, func(r rune) bool { return r != ' ' && !isOther(r) && isCleanSpace(r) }},
		{"is_chinese_char", probe.CJK, isCJK},
		{"is_bert_punc", probe.Punct, isPunct},
		{"char::is_whitespace", probe.SplitWS, isSplitSpace},
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
	return filepath.Join(repoRoot(t), "..", "shared", "data", "wiki_multihop")
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
			want := oracleEncode(t, tokPath, texts, maxLen)
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
			want := oracleEncode(t, path, texts, 0)
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
