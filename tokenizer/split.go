package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// qwenSplitPattern is the Split pre-tokenizer regex of Qwen2/Qwen2.5/Qwen3's
// tokenizer.json. splitQwen implements exactly this pattern by hand (about
// 10x faster than regexp2 here); other patterns run on regexp2.
const qwenSplitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Character classes of the pattern: \p{L} (unicode.IsLetter), \p{N}
// (unicode.IsNumber) and \s (Unicode White_Space: unicode.IsSpace, as
// Oniguruma's \s for UTF-8).
func isL(r rune) bool {
	return r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') || r >= 0x80 && unicode.IsLetter(r)
}
func isN(r rune) bool {
	return '0' <= r && r <= '9' || r >= 0x80 && unicode.IsNumber(r)
}
func isS(r rune) bool    { return unicode.IsSpace(r) }
func isCRLF(r rune) bool { return r == '\r' || r == '\n' }
func isPunc(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }
func foldEq(r, c rune) bool {
	// Case-insensitive match against the lower-case ASCII letter c, with
	// Unicode simple case folding (U+017F LONG S folds to s).
	return r == c || r == c-'a'+'A' || c == 's' && r == 0x17F
}

// contraction returns the byte length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at
// the start of s (which begins with '\”), or 0.
func contraction(s string) int {
	r1, n1 := utf8.DecodeRuneInString(s[1:])
	if n1 == 0 {
		return 0
	}
	switch {
	case foldEq(r1, 's'), foldEq(r1, 't'), foldEq(r1, 'm'), foldEq(r1, 'd'):
		return 1 + n1
	}
	r2, n2 := utf8.DecodeRuneInString(s[1+n1:])
	if n2 == 0 {
		return 0
	}
	switch {
	case foldEq(r1, 'r') && foldEq(r2, 'e'), foldEq(r1, 'v') && foldEq(r2, 'e'), foldEq(r1, 'l') && foldEq(r2, 'l'):
		return 1 + n1 + n2
	}
	return 0
}

// splitQwen calls emit with each match of qwenSplitPattern in s, in order,
// until emit returns false; s must be valid UTF-8. Every character belongs
// to some match, so the pieces concatenate to s. The alternatives are tried
// in the pattern's order at each position, with its backtracking worked
// out: see the comments.
func splitQwen(s string, emit func(string) bool) bool {
	for i := 0; i < len(s); {
		end := matchQwen(s, i)
		if !emit(s[i:end]) {
			return false
		}
		i = end
	}
	return true
}

// matchQwen returns the end of the match starting at i (> i).
func matchQwen(s string, i int) int {
	c, n := utf8.DecodeRuneInString(s[i:])
	// 1. (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if c == '\'' {
		if k := contraction(s[i:]); k > 0 {
			return i + k
		}
	}
	// 2. [^\r\n\p{L}\p{N}]?\p{L}+
	j := i
	if !isCRLF(c) && !isL(c) && !isN(c) {
		j = i + n
	}
	if r, m := utf8.DecodeRuneInString(s[j:]); m > 0 && isL(r) {
		j += m
		for j < len(s) {
			r, m := utf8.DecodeRuneInString(s[j:])
			if !isL(r) {
				break
			}
			j += m
		}
		return j
	}
	// 3. \p{N}
	if isN(c) {
		return i + n
	}
	// 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j = i
	if c == ' ' {
		j = i + 1
	}
	k := j
	for k < len(s) {
		r, m := utf8.DecodeRuneInString(s[k:])
		if !isPunc(r) {
			break
		}
		k += m
	}
	if k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k
	}
	// c is whitespace from here on (every other character matched above).
	// Find the whitespace run [i, end) and its last CR/LF.
	end, lastNL, prev := i, -1, i
	for end < len(s) {
		r, m := utf8.DecodeRuneInString(s[end:])
		if !isS(r) {
			break
		}
		if isCRLF(r) {
			lastNL = end
		}
		prev = end
		end += m
	}
	// 5. \s*[\r\n]+ : \s* backs off to the run's last CR/LF.
	if lastNL >= 0 {
		return lastNL + 1
	}
	// 6. \s+(?!\S): the whole run at the end of the text, else all but its
	// last character (which then precedes a whitespace, not \S).
	if end == len(s) {
		return end
	}
	if prev > i {
		return prev
	}
	// 7. \s+ : a single whitespace before non-whitespace.
	return end
}
