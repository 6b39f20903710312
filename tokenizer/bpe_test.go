package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// bpeParityStrings returns the parity test set: hand-picked traps, seeded
// random mixtures of awkward fragments, and real passages from the shared
// wiki corpus when it is present.
func bpeParityStrings(tb testing.TB) []string {
	fixed := []string{
		"", " ", "  ", "\n", "\r\n", "\t\t", "hello world", "Hello World!", "....", ".....", "......", "..........",
		"---", "----", "-----", "—", "– - —", "...---...", "a...b", "end.\n\nNext", "I'm", "I'M", "they'RE", "we'Ve",
		"don't", "'s", "''s", "x's's", "<|im_start|>user\nhi<|im_end|>", "<|im_start|><|im_end|>",
		"a<|endoftext|>b", "<think>\n\n</think>\n\n", "<think>", "< think>", "<|im_start", "<|im_start|", "<<|im_end|>>",
		"<tool_call></tool_call>", "<|fim_prefix|>x<|fim_suffix|>", "北京是中国的首都。", "日本語のテキスト、です。",
		"한국어 문장입니다", "Ελληνικά", "русский текст", "العربية", "עברית", "हिन्दी", "ไทย", "😀", "👨‍👩‍👧‍👦", "🇺🇸🇫🇷",
		"e\u0301", "\u00e9", "A\u030a", "\u212b", "ﬁ", "①②", "١٢٣", "12345678901234567890", "3.14159", "1,000,000",
		"\u00a0x\u00a0", "\u2028", "\u3000全角", "\u200b", "\ufeffbom", "\x00\x01\x7f", "\xff", "\xe2\x82", "a\xe2\x82b",
		"\xed\xa0\x80", "\xf0\x9f\x98", "\xc0\xaf", "\xf4\x90\x80\x80", "tab\there", "trailing   ", "   leading",
		"  \n  \n", "a\n\n\nb", "x \r\n y", "http://example.com/a?b=c&d=e", "user@example.com", "#hashtag @user",
		"snake_case camelCase PascalCase", "C++ and C#", "$100 €50 ¥30", "(parenthesised) [bracket] {brace}",
		"\"quoted\" 'single'", "“smart quotes”", "émigré naïve café", "straße", "İstanbul", "ǅ", "ﬀ", "Ⅻ",
		strings.Repeat("a", 300), strings.Repeat("ab", 200), strings.Repeat(" ", 100) + "x", strings.Repeat(".", 257),
		strings.Repeat("-", 129), strings.Repeat("😀", 40), strings.Repeat("中", 100),
	}
	frags := []string{
		"the", " the", "The", "quick", " brown", "fox", "'s", "'re", "'LL", "'d", "'t", " ", "  ", "\t", "\n", "\r\n", "\r",
		".", "..", "...", "....", "-", "--", "---", "—", "!", "?", ",", ";", ":", "(", ")", "\"", "'", "`", "/", "\\",
		"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "<|vision_pad|>", "<|im",
		"中文", "字", "。", "、", "日本", "カタカナ", "한국", "😀", "🎉", "👍🏽", "❤️", "\u200d", "e\u0301", "\u0301",
		"\u00a0", "\u3000", "\u2028", "\u0085", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f", "\xed\xa0\x80",
		"0", "7", "42", "2018", "3.5", "1e10", "½", "²", "٣", "abc123", "x_y", "ALLCAPS", "MiXeD", "ﬁ", "Å", "ß",
		"http://", "www.", ".com", "@", "#", "$", "%", "^", "&", "*", "_", "+", "=", "|", "~", "<", ">", "[", "]", "{", "}",
	}
	rng := rand.New(rand.NewPCG(7, 11))
	out := slices.Clone(fixed)
	for len(out) < 1500 {
		n := 1 + rng.IntN(24)
		var sb strings.Builder
		for range n {
			sb.WriteString(frags[rng.IntN(len(frags))])
		}
		out = append(out, sb.String())
	}
	// Random bytes and random code points.
	for range 100 {
		b := make([]byte, 1+rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		out = append(out, string(b))
	}
	for range 100 {
		var sb strings.Builder
		for range 1 + rng.IntN(20) {
			r := rune(rng.IntN(0x30000))
			if r >= 0xd800 && r <= 0xdfff {
				r = 'x'
			}
			sb.WriteRune(r)
		}
		out = append(out, sb.String())
	}
	out = append(out, realPassages(tb, 2100-len(out))...)
	for len(out) < 2100 { // no shared data: more synthetic mixtures
		var sb strings.Builder
		for range 40 {
			sb.WriteString(frags[rng.IntN(len(frags))])
		}
		out = append(out, sb.String())
	}
	return out
}

// realPassages reads up to n passages from the shared wiki corpus (in
// place), or none when it is absent.
func realPassages(tb testing.TB, n int) []string {
	dir := os.Getenv("RLSEARCH_DATA")
	if dir == "" {
		dir = filepath.Join(testutil.RepoRoot(tb), "..", "shared", "data")
	}
	f, err := os.Open(filepath.Join(dir, "wiki_multihop", "corpus.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []string
	for len(out) < n && sc.Scan() {
		var d struct {
			Contents string `json:"contents"`
		}
		if json.Unmarshal(sc.Bytes(), &d) == nil {
			out = append(out, d.Contents)
		}
	}
	return out
}

func TestQwen3TokenizerParityWithHF(t *testing.T) {
	path := qwen3TokenizerPath(t)
	tok := loadQwen3(t)
	texts := bpeParityStrings(t)
	want := testutil.OracleEncode(t, path, texts, 0)
	same := 0
	var bad []string
	for i, s := range texts {
		got := tok.Encode(s)
		if slices.Equal(got, want[i]) {
			same++
			continue
		}
		if len(bad) < 10 {
			bad = append(bad, fmt.Sprintf("%q:\n  got  %v\n  want %v", s, got, want[i]))
		}
	}
	t.Logf("Qwen3 tokenizer parity: %d/%d strings identical to Hugging Face tokenizers", same, len(texts))
	if len(texts) < 2000 {
		t.Errorf("only %d parity strings, want >= 2000", len(texts))
	}
	if same != len(texts) {
		t.Errorf("%d strings differ, first ones:\n%s", len(texts)-same, strings.Join(bad, "\n"))
	}
}

func TestQwen3TokenizerBasics(t *testing.T) {
	tok := loadQwen3(t)
	if got := tok.VocabSize(); got != 151669 {
		t.Errorf("VocabSize = %d, want 151669 (151,643 vocab + 26 added)", got)
	}
	for _, tc := range []struct {
		tok  string
		want int32
	}{{"<|endoftext|>", 151643}, {"<|im_start|>", 151644}, {"<|im_end|>", 151645}, {"<think>", 151667}, {"</think>", 151668}} {
		if id, ok := tok.TokenID(tc.tok); !ok || id != tc.want {
			t.Errorf("TokenID(%q) = %d, %v; want %d", tc.tok, id, ok, tc.want)
		}
	}
	if _, ok := tok.TokenID("no-such-token-xyz"); ok {
		t.Error("TokenID of an unknown token reported ok")
	}
	for _, s := range []string{"", "hello world", "<|im_start|>a b c<|im_end|>", strings.Repeat("word ", 100)} {
		ids := tok.Encode(s)
		if n := tok.CountTokens(s); n != len(ids) {
			t.Errorf("CountTokens(%q) = %d, len(Encode) = %d", s, n, len(ids))
		}
		for limit := range len(ids) + 2 {
			got := tok.EncodeLimit(s, limit)
			want := ids
			if limit > 0 && limit < len(ids) {
				want = ids[:limit]
			}
			if !slices.Equal(got, want) {
				t.Errorf("EncodeLimit(%q, %d) = %v, want %v", s, limit, got, want)
			}
		}
	}
}

func TestQwen3TokenizerConcurrent(t *testing.T) {
	tok := loadQwen3(t)
	texts := bpeParityStrings(t)[:300]
	want := make([][]int32, len(texts))
	for i, s := range texts {
		want[i] = tok.Encode(s)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range texts {
				j := (i + g*37) % len(texts)
				if got := tok.Encode(texts[j]); !slices.Equal(got, want[j]) {
					t.Errorf("concurrent Encode(%q) = %v, want %v", texts[j], got, want[j])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestLoadBPEErrors(t *testing.T) {
	for _, tc := range []struct{ name, json string }{
		{"not json", "{"},
		{"wordpiece", `{"model": {"type": "WordPiece", "vocab": {}}}`},
		{"no pretokenizer", `{"model": {"type": "BPE", "vocab": {}, "merges": []}}`},
		{"byte fallback", `{"model": {"type": "BPE", "byte_fallback": true, "vocab": {}, "merges": []}}`},
		{"bad normalizer", `{"normalizer": {"type": "NFKC"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseBPE([]byte(tc.json)); err == nil {
				t.Fatal("parseBPE accepted it")
			}
		})
	}
	if _, err := LoadBPE(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadBPE of a missing file succeeded")
	}
}

func FuzzQwen3Encode(f *testing.F) {
	for _, s := range []string{"", "hello", "<|im_start|>x", "\xff\xfe", "....", "中文😀"} {
		f.Add(s)
	}
	tok := loadQwen3(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		if n := tok.CountTokens(s); n != len(ids) {
			t.Fatalf("CountTokens %d != %d", n, len(ids))
		}
	})
}

func BenchmarkQwen3Encode(b *testing.B) {
	tok := loadQwen3(b)
	texts := realPassages(b, 200)
	if len(texts) == 0 {
		texts = bpeParityStrings(b)[:200]
	}
	var bytes, toks int
	for _, s := range texts {
		bytes += len(s)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, s := range texts {
			toks += tok.CountTokens(s)
		}
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tokens/s")
}
