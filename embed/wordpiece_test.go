package embed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
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

var _ = errors.Is
var _ = rand.New
