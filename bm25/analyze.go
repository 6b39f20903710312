package bm25

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"github.com/clipperhouse/uax29/v2/words"
	"golang.org/x/text/unicode/norm"
)

// MaxTokenLength is the longest token, in UTF-16 code units, that the
// tokenizer emits; longer words are cut into pieces of at most this length,
// as Lucene's StandardTokenizer does (StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH = 255).
const MaxTokenLength = 255

// stopWords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (33 words),
// the stop set of Anserini's DefaultEnglishAnalyzer as Pyserini uses it.
var stopWords = map[string]struct{}{
	"a": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {}, "but": {}, "by": {},
	"for": {}, "if": {}, "in": {}, "into": {}, "is": {}, "it": {}, "no": {}, "not": {}, "of": {},
	"on": {}, "or": {}, "such": {}, "that": {}, "the": {}, "their": {}, "then": {}, "there": {},
	"these": {}, "they": {}, "this": {}, "to": {}, "was": {}, "will": {}, "with": {},
}

// stemExceptions are the words on which go-porterstemmer disagrees with
// Lucene's PorterStemmer: Lucene's ends() accepts a suffix as long as the
// whole word, go-porterstemmer's hasSuffix does not, so these words (after
// step 1a) take a different branch. Checked by hand against
// org.apache.lucene.analysis.en.PorterStemmer (step1).
var stemExceptions = map[string]string{
	"ies":  "i",
	"sses": "ss",
	"eed":  "eed",
	"eeds": "eed",
}

// Analyze turns text into index terms the way Anserini's
// DefaultEnglishAnalyzer (Pyserini's default for BM25) does, after one
// step of its own:
//
//  0. Unicode NFC (golang.org/x/text/unicode/norm), so that canonically
//     equivalent texts ("Beyonce" + U+0301 and "Beyoncé") give the same
//     terms. Lucene's analyzer does not normalize; on NFC input (Wikipedia
//     text is NFC) the terms are the same. ASCII-only text is already NFC
//     and skips this step after one byte scan. Indexes record that their
//     terms were analyzed this way (header flag FlagNFC).
//  1. StandardTokenizer: Unicode UAX#29 word segmentation
//     (github.com/clipperhouse/uax29/v2/words); only word-like segments are
//     kept (letters, digits, ideographs, kana, hangul, emoji); every CJK
//     ideograph is its own token; tokens longer than MaxTokenLength UTF-16
//     units are cut.
//  2. EnglishPossessiveFilter: a trailing 's, ’s or ＇s (either case of s) is removed.
//  3. LowerCaseFilter (unicode.ToLower per code point).
//  4. StopFilter with the 33 words of Lucene's ENGLISH_STOP_WORDS_SET.
//  5. PorterStemFilter (github.com/blevesearch/go-porterstemmer, with the
//     few whole-word cases where it differs from Lucene's PorterStemmer fixed).
//
// Invalid UTF-8 is replaced by U+FFFD before segmentation. The result is a
// fresh slice owned by the caller; nil when no term survives (for example a
// text of stop words only). Analyze is safe for concurrent use.
func Analyze(text string) []string {
	var out []string
	var a analyzer
	a.run(text, func(term []byte) { out = append(out, string(term)) })
	return out
}

// analyzer holds the scratch buffers of one analysis; the zero value is
// ready to use. It is not safe for concurrent use; each goroutine owns its own.
type analyzer struct {
	runes []rune
	term  []byte
}

// run analyzes text and calls emit for every term in order. The slice passed
// to emit is only valid during the call.
func (a *analyzer) run(text string, emit func(term []byte)) {
	text = normalizeText(text)
	it := words.FromString(text)
	for it.Next() {
		seg := it.Value()
		if !wordLike(seg) {
			continue
		}
		// Cut at MaxTokenLength UTF-16 units (StandardTokenizer.setMaxTokenLength).
		a.runes = a.runes[:0]
		units := 0
		for _, r := range seg {
			w := 1
			if r >= 0x10000 {
				w = 2
			}
			if units+w > MaxTokenLength {
				a.token(emit)
				a.runes = a.runes[:0]
				units = 0
			}
			a.runes = append(a.runes, r)
			units += w
		}
		a.token(emit)
	}
}

// token runs the filter chain on a.runes (one tokenizer token).
func (a *analyzer) token(emit func(term []byte)) {
	rs := a.runes
	if len(rs) == 0 {
		return
	}
	// EnglishPossessiveFilter.
	if n := len(rs); n >= 2 && (rs[n-1] == 's' || rs[n-1] == 'S') &&
		(rs[n-2] == '\'' || rs[n-2] == '\u2019' || rs[n-2] == '\uFF07') {
		rs = rs[:n-2]
	}
	// LowerCaseFilter.
	for i, r := range rs {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				rs[i] = r + ('a' - 'A')
			}
		} else {
			rs[i] = unicode.ToLower(r)
		}
	}
	// StopFilter: every stop word is ASCII and at most 5 letters long.
	if len(rs) <= 5 {
		a.encode(rs)
		if isStopWord(a.term) {
			return
		}
	}
	// PorterStemFilter (Lucene skips terms of two chars or less; so does the library).
	if len(rs) <= 4 {
		a.encode(rs)
		if s, ok := stemExceptions[string(a.term)]; ok {
			a.term = append(a.term[:0], s...)
			emit(a.term)
			return
		}
	}
	rs = porterstemmer.StemWithoutLowerCasing(rs)
	a.encode(rs)
	if len(a.term) > 0 {
		emit(a.term)
	}
}

// isStopWord reports whether term is in stopWords; a switch is several
// times faster than the map on this hot path.
func isStopWord(term []byte) bool {
	switch string(term) {
	case "a", "an", "and", "are", "as", "at", "be", "but", "by",
		"for", "if", "in", "into", "is", "it", "no", "not", "of",
		"on", "or", "such", "that", "the", "their", "then", "there",
		"these", "they", "this", "to", "was", "will", "with":
		return true
	}
	return false
}

func (a *analyzer) encode(rs []rune) {
	a.term = a.term[:0]
	for _, r := range rs {
		a.term = utf8.AppendRune(a.term, r)
	}
}

// wordLike reports whether a UAX#29 segment is a token for StandardTokenizer:
// it holds a letter (any script, so ideographs, kana, hangul), a decimal
// digit or an emoji. Segments of spaces, punctuation or symbols are dropped.
// normalizeText replaces invalid UTF-8 by U+FFFD and returns the NFC form
// of text. ASCII text (the common case in English corpora) is returned as
// is after one byte scan, without the normalizer's quick check.
func normalizeText(text string) string {
	if isASCII(text) {
		return text
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return norm.NFC.String(text)
}

// isASCII reports whether s holds only ASCII bytes (then it is valid UTF-8
// and already in every Unicode normalization form).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func wordLike(seg string) bool {
	for _, r := range seg {
		if r < utf8.RuneSelf {
			if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
				return true
			}
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || isEmoji(r) {
			return true
		}
	}
	return false
}

// isEmoji approximates Unicode's Extended_Pictographic property (plus the
// regional indicators) with its main blocks; the Go standard library has no
// table for it.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF: // Mahjong .. Symbols and Pictographs Extended-A, regional indicators
		return true
	case r >= 0x2600 && r <= 0x27BF: // Miscellaneous Symbols, Dingbats
		return true
	case r >= 0x2300 && r <= 0x23FF: // Miscellaneous Technical (⌚, ⏰, ...)
		return true
	case r >= 0x2B00 && r <= 0x2BFF: // Miscellaneous Symbols and Arrows (⬛, ⭐)
		return true
	}
	return false
}
