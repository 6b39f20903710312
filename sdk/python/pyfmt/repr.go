package pyfmt

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FloatRepr returns repr(f) (which is also str(f)) as CPython 3.11 prints it.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	neg := math.Signbit(f)
	digits, decpt := shortestDigits(math.Abs(f))
	var s string
	if decpt <= -4 || decpt > 16 {
		s = expForm(digits, decpt, false)
	} else {
		s = fixedForm(digits, decpt, 1)
	}
	if neg {
		return "-" + s
	}
	return s
}

// shortestDigits returns the shortest round-trip decimal digits of a finite
// non-negative f and decpt such that f = 0.digits × 10^decpt.
// Zero gives ("0", 1).
func shortestDigits(f float64) (string, int) {
	if f == 0 {
		return "0", 1
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	return splitE(e)
}

// splitE splits Go's d.ddde±XX into digits (no point) and decpt.
func splitE(e string) (string, int) {
	i := strings.IndexByte(e, 'e')
	mant, exp := e[:i], e[i+1:]
	x, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	return digits, x + 1
}

// expForm renders digits × 10^(decpt-1) as d.ddd e±XX (lower case e).
// alt keeps a trailing point when there is a single digit.
func expForm(digits string, decpt int, alt bool) string {
	var b strings.Builder
	b.WriteByte(digits[0])
	if len(digits) > 1 || alt {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteString(expSuffix(decpt - 1))
	return b.String()
}

func expSuffix(x int) string {
	sign := "+"
	if x < 0 {
		sign = "-"
		x = -x
	}
	s := strconv.Itoa(x)
	if len(s) < 2 {
		s = "0" + s
	}
	return "e" + sign + s
}

// fixedForm renders 0.digits × 10^decpt in fixed notation with at least
// minFrac fraction digits (0: no point unless digits need it; -1: never a
// point... not used).
func fixedForm(digits string, decpt, minFrac int) string {
	var intPart, frac string
	switch {
	case decpt <= 0:
		intPart = "0"
		frac = strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		intPart = digits + strings.Repeat("0", decpt-len(digits))
	default:
		intPart, frac = digits[:decpt], digits[decpt:]
	}
	for len(frac) < minFrac {
		frac += "0"
	}
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

// StrRepr returns repr(s) for a Python str held as a Go string.
// Bytes that are not UTF-8 are shown as \udcXX (see the package doc).
func StrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\udc`)
			writeHex(&b, uint32(s[i]), 2)
			i++
			continue
		}
		i += n
		writeReprRune(&b, r, quote)
	}
	b.WriteByte(quote)
	return b.String()
}

func writeReprRune(b *strings.Builder, r rune, quote byte) {
	switch {
	case r == rune(quote) || r == '\\':
		b.WriteByte('\\')
		b.WriteRune(r)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < ' ' || r == 0x7f:
		b.WriteString(`\x`)
		writeHex(b, uint32(r), 2)
	case r < 0x7f:
		b.WriteRune(r)
	case IsPrintable(r):
		b.WriteRune(r)
	case r <= 0xff:
		b.WriteString(`\x`)
		writeHex(b, uint32(r), 2)
	case r <= 0xffff:
		b.WriteString(`\u`)
		writeHex(b, uint32(r), 4)
	default:
		b.WriteString(`\U`)
		writeHex(b, uint32(r), 8)
	}
}

// ASCIIRepr returns ascii(s): repr(s) with every non-ASCII code point escaped.
func ASCIIRepr(s string) string { return ASCII(StrRepr(s)) }

// ASCII escapes the non-ASCII code points of a repr text as ascii() does:
// ascii(x) is ASCII(repr(x)).
func ASCII(r string) string {
	var b strings.Builder
	for _, c := range r {
		switch {
		case c < 0x80:
			b.WriteRune(c)
		case c <= 0xff:
			b.WriteString(`\x`)
			writeHex(&b, uint32(c), 2)
		case c <= 0xffff:
			b.WriteString(`\u`)
			writeHex(&b, uint32(c), 4)
		default:
			b.WriteString(`\U`)
			writeHex(&b, uint32(c), 8)
		}
	}
	return b.String()
}

// IsPrintable reports str.isprintable for one code point: letters, marks,
// numbers, punctuation, symbols and the ASCII space.
func IsPrintable(r rune) bool {
	if r >= 0xd800 && r <= 0xdfff {
		return false
	}
	return unicode.IsPrint(r)
}

func writeHex(b *strings.Builder, v uint32, n int) {
	const hex = "0123456789abcdef"
	for i := n - 1; i >= 0; i-- {
		b.WriteByte(hex[(v>>(4*uint(i)))&0xf])
	}
}
