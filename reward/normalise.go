package reward

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"github.com/clipperhouse/uax29/v2/words"
	"golang.org/x/text/unicode/norm"
)

// judgeTerms is the lexical judge's own normaliser, pinned so that reward
// values never move with the search analyzer: it is a frozen copy of what
// bm25.Analyze computed on 2026-12-02 (Lucene's EnglishAnalyzer as
// Anserini uses it), and TestJudgeNormaliserPinned holds it to the terms
// and judgements recorded then (testdata/judge_terms.json). Per text:
//
//  1. invalid UTF-8 becomes U+FFFD; non-ASCII text is put in Unicode NFC;
//  2. UAX#29 words (github.com/clipperhouse/uax29/v2), keeping the
//     word-like ones (a letter, digit or emoji), cut at 255 UTF-16 units;
//  3. a trailing 's, ’s or ＇s (either case of s) is removed;
//  4. lower case per code point (unicode.ToLower);
//  5. Lucene's 33 English stop words are dropped;
//  6. Porter stems (github.com/blevesearch/go-porterstemmer, with the four
//     whole-word cases where it differs from Lucene's stemmer fixed).
//
// The library versions are those of go.mod; a bump that changes a term
// fails the golden test. nil when no term survives. Safe for concurrent use.
func judgeTerms(text string) []string {
	text = judgeNFC(text)
	var out []string
	it := words.FromString(text)
	for it.Next() {
		seg := it.Value()
		if !judgeWordLike(seg) {
			continue
		}
		var rs []rune
		units := 0
		for _, r := range seg {
			w := 1
			if r >= 0x10000 {
				w = 2
			}
			if units+w > judgeMaxTokenUnits {
				out = judgeToken(out, rs)
				rs, units = nil, 0
			}
			rs = append(rs, r)
			units += w
		}
		out = judgeToken(out, rs)
	}
	return out
}

// judgeMaxTokenUnits is Lucene's StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH
// in UTF-16 code units.
const judgeMaxTokenUnits = 255

// judgeStemExceptions are the words on which go-porterstemmer disagrees
// with Lucene's PorterStemmer (a suffix as long as the whole word).
var judgeStemExceptions = map[string]string{"ies": "i", "sses": "ss", "eed": "eed", "eeds": "eed"}

// judgeStopWords is Lucene's ENGLISH_STOP_WORDS_SET.
var judgeStopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true, "by": true,
	"for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true, "not": true, "of": true,
	"on": true, "or": true, "such": true, "that": true, "the": true, "their": true, "then": true, "there": true,
	"these": true, "they": true, "this": true, "to": true, "was": true, "will": true, "with": true,
}

// judgeToken runs steps 3-6 on one token and appends the term, if any.
func judgeToken(out []string, rs []rune) []string {
	if len(rs) == 0 {
		return out
	}
	if n := len(rs); n >= 2 && (rs[n-1] == 's' || rs[n-1] == 'S') &&
		(rs[n-2] == '\'' || rs[n-2] == '\u2019' || rs[n-2] == '\uFF07') {
		rs = rs[:n-2]
	}
	for i, r := range rs {
		rs[i] = unicode.ToLower(r)
	}
	term := string(rs)
	if judgeStopWords[term] {
		return out
	}
	if s, ok := judgeStemExceptions[term]; ok {
		return append(out, s)
	}
	if term = string(porterstemmer.StemWithoutLowerCasing(rs)); term != "" {
		out = append(out, term)
	}
	return out
}

// judgeNFC replaces invalid UTF-8 by U+FFFD and returns the NFC form of
// text (ASCII text as is).
func judgeNFC(text string) string {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return text
	}
	return norm.NFC.String(strings.ToValidUTF8(text, "\uFFFD"))
}

// judgeWordLike reports whether a UAX#29 segment is a token: it holds a
// letter, a decimal digit or an emoji (the main Extended_Pictographic
// blocks and the regional indicators).
func judgeWordLike(seg string) bool {
	for _, r := range seg {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r),
			r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF,
			r >= 0x2300 && r <= 0x23FF, r >= 0x2B00 && r <= 0x2BFF:
			return true
		}
	}
	return false
}
