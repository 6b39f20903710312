package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dlclark/regexp2"
)

// regexpPieces splits s with the pattern on regexp2 (the general path).
func regexpPieces(tb testing.TB, s string) []string {
	t := &BPE{split: regexp2.MustCompile(qwenSplitPattern, regexp2.None)}
	var out []string
	t.splitRegexp(s, func(p string) bool { out = append(out, p); return true })
	return out
}

func fastPieces(s string) []string {
	var out []string
	splitQwen(s, func(p string) bool { out = append(out, p); return true })
	return out
}

// splitTraps are hand-made strings for the splitter's alternatives.
var splitTraps = []string{"'s", "'S", "'sx", "'ſx", "'re", "'REally", "'ll'", "''", "'", "x'", " 'd", "a\r\n\r\n b",
	"  \n  ", "\t\n\t", "x \t y", "x  ", " \u00a0x", "\u3000\u3000中", "!!\n\n", " !!\r\n", "1 2", " 1", "a1b", "\u0301a",
	" \u0301", "\u2028x", "\x85"}

// hasLongS reports whether s holds U+017F, which Oniguruma (Hugging Face)
// case-folds to s inside (?i:'s) and regexp2 does not.
func hasLongS(s string) bool { return strings.ContainsRune(s, 0x17F) }

// TestSplitQwenMatchesRegexp: the hand-written splitter equals the
// pattern run by regexp2 on the parity strings and the traps (except where
// regexp2 lacks Unicode case folding).
func TestSplitQwenMatchesRegexp(t *testing.T) {
	for _, s := range append(bpeParityStrings(t), splitTraps...) {
		s = validUTF8(s)
		if hasLongS(s) {
			continue
		}
		got, want := fastPieces(s), regexpPieces(t, s)
		if !slices.Equal(got, want) {
			t.Errorf("%q:\nfast   %q\nregexp %q", s, got, want)
		}
		if strings.Join(got, "") != s {
			t.Errorf("%q: pieces do not concatenate to the text", s)
		}
	}
}

// TestSplitQwenMatchesHF compares the pieces with Hugging Face's own
// pre-tokenizer (Split + ByteLevel) on the parity strings and the traps.
func TestSplitQwenMatchesHF(t *testing.T) {
	texts := append(bpeParityStrings(t), splitTraps...)
	for i, s := range texts {
		texts[i] = validUTF8(s)
	}
	want := oraclePretokenize(t, qwen3TokenizerPath(t), texts)
	same, residue := 0, 0
	for i, s := range texts {
		var got []string
		for _, p := range fastPieces(s) {
			var sb strings.Builder
			for j := range len(p) {
				sb.WriteRune(byteRune[p[j]])
			}
			got = append(got, sb.String())
		}
		switch {
		case len(got) == 0 && len(want[i]) == 0 || slices.Equal(got, want[i]):
			same++
		case hasUnassigned(s):
			residue++
		default:
			t.Errorf("%q:\ngo %q\nhf %q", s, got, want[i])
		}
	}
	t.Logf("pre-tokenizer parity: %d/%d strings identical; %d differ only in strings with code points unassigned in Go's Unicode %s tables",
		same, len(texts), residue, unicode.Version)
}

// hasUnassigned reports whether s holds a code point that Go's Unicode
// tables leave unassigned (Hugging Face's Rust tables can be newer: its
// letters there can be Go's "other").
func hasUnassigned(s string) bool {
	for _, r := range s {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
			return true
		}
	}
	return false
}

func FuzzSplitQwen(f *testing.F) {
	for _, s := range []string{"", "it's", " \n ", "a  b", "x!!\r\ny", "'ſx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		if hasLongS(s) {
			return
		}
		if got, want := fastPieces(s), regexpPieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("%q:\nfast   %q\nregexp %q", s, got, want)
		}
	})
}
