// Package utf8x holds the UTF-8 rule our tokenizers share with Hugging
// Face's: how many bytes of an ill-formed sequence one U+FFFD replaces.
package utf8x

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
