// Package utf8x holds the UTF-8 rules shared across the module: how many
// bytes of an ill-formed sequence one U+FFFD replaces (the rule our
// tokenizers share with Hugging Face's), and where the first ill-formed
// byte of an input is (so that the corpus reader and the JSON bodies name
// the same offset).
package utf8x

import "unicode/utf8"

// InvalidLen returns the length of the maximal subpart of the ill-formed
// UTF-8 sequence at the start of s (len(s) > 0): the bytes that Rust's
// from_utf8_lossy and Node's Buffer.toString replace with a single U+FFFD
// (Unicode 15, section 3.9, "U+FFFD Substitution of Maximal Subparts").
// Go's decoder reports one error per byte instead.
func InvalidLen(s string) int {
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	switch c := s[0]; {
	case 0xC2 <= c && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case 0xE1 <= c && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case 0xF1 <= c && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if s[n] < lo || s[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// InvalidOffset returns the offset of the first byte of b that starts no
// valid UTF-8 sequence, or -1 when b is valid UTF-8.
func InvalidOffset(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
