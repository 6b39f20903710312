package pyfmt

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PercentPart is one piece of a printf-style template: a literal (Conv 0)
// or a conversion.
type PercentPart struct {
	Literal string
	// Conv is d i o u x X e E f F g G c r s a, or '?' for an unsupported
	// character: then Err is the ValueError to raise once the argument has
	// been taken (CPython's order). "%%" is a literal.
	Conv byte
	Err  error
	// Key is the mapping key of %(key)s; HasKey tells it was given.
	Key    string
	HasKey bool
	// Flags.
	Minus, Plus, Space, Alt, Zero bool
	// Width and Prec are -1 when absent; WidthStar / PrecStar mean '*'
	// (the caller takes the value from the next argument, then sets Width or
	// Prec; a negative '*' width means left-adjust, as in CPython).
	Width, Prec         int
	WidthStar, PrecStar bool
}

// PercentError is CPython's ValueError / TypeError for a % template; Type
// names the Python exception class.
type PercentError struct {
	Type string
	Msg  string
}

func (e *PercentError) Error() string { return e.Msg }

// Messages the caller raises while binding arguments, as CPython words them.
const (
	MsgNotEnoughArgs = "not enough arguments for format string"               // TypeError
	MsgNotAllArgs    = "not all arguments converted during string formatting" // TypeError
	MsgNeedMapping   = "format requires a mapping"                            // TypeError
	MsgStarWantsInt  = "* wants int"                                          // TypeError
	MsgCharRange     = "%c arg not in range(0x110000)"                        // OverflowError
	MsgCharNeedsChar = "%c requires int or char"                              // TypeError
)

// MsgNumberRequired is the TypeError text for %d and friends given a
// non-number: "%d format: a real number is required, not str".
func MsgNumberRequired(conv byte, typeName string) string {
	switch conv {
	case 'c':
		return MsgCharNeedsChar
	case 'o', 'x', 'X':
		return fmt.Sprintf("%%%c format: an integer is required, not %s", conv, typeName)
	case 'e', 'E', 'f', 'F', 'g', 'G':
		return fmt.Sprintf("must be real number, not %s", typeName)
	}
	return fmt.Sprintf("%%%c format: a real number is required, not %s", conv, typeName)
}

// ParsePercent parses a printf-style template. On error it returns the parts
// before the error too (see the package doc on evaluation order).
func ParsePercent(format string) ([]PercentPart, error) {
	var parts []PercentPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, PercentPart{Literal: lit.String()})
			lit.Reset()
		}
	}
	s := format
	i := 0
	for i < len(s) {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			i++
			continue
		}
		start := i
		i++
		p := PercentPart{Width: -1, Prec: -1}
		if i < len(s) && s[i] == '(' {
			depth := 1
			j := i + 1
			for j < len(s) && depth > 0 {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
				}
				j++
			}
			if depth > 0 {
				flush()
				return parts, &PercentError{"ValueError", "incomplete format key"}
			}
			p.Key, p.HasKey = s[i+1:j-1], true
			i = j
		}
	flags:
		for i < len(s) {
			switch s[i] {
			case '-':
				p.Minus = true
			case '+':
				p.Plus = true
			case ' ':
				p.Space = true
			case '#':
				p.Alt = true
			case '0':
				p.Zero = true
			default:
				break flags
			}
			i++
		}
		if i < len(s) && s[i] == '*' {
			p.WidthStar = true
			i++
		} else {
			v, n, err := percentDigits(s[i:], "width")
			if err != nil {
				flush()
				return parts, err
			}
			if n > 0 {
				p.Width = v
				i += n
			}
		}
		if i < len(s) && s[i] == '.' {
			i++
			p.Prec = 0
			if i < len(s) && s[i] == '*' {
				p.PrecStar = true
				i++
			} else {
				v, n, err := percentDigits(s[i:], "precision")
				if err != nil {
					flush()
					return parts, err
				}
				p.Prec = v
				i += n
			}
		}
		for i < len(s) && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L') {
			i++
		}
		if i >= len(s) {
			flush()
			return parts, &PercentError{"ValueError", "incomplete format"}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 'd', 'i', 'o', 'u', 'x', 'X', 'e', 'E', 'f', 'F', 'g', 'G', 'c', 'r', 's', 'a':
			p.Conv = byte(r)
		default:
			if r == '%' && i == start+1 {
				lit.WriteByte('%')
				i++
				continue
			}
			// CPython takes the argument first, then fails on the character.
			p.Conv = '?'
			ch := string(r)
			if r == utf8.RuneError && n == 1 {
				r = 0xdc00 + rune(s[i])
				ch = "\\udc" + hex2(s[i])
			}
			p.Err = &PercentError{"ValueError", fmt.Sprintf("unsupported format character '%s' (0x%x) at index %d", ch, r, utf8.RuneCountInString(s[:i]))}
		}
		i += n
		flush()
		parts = append(parts, p)
	}
	flush()
	return parts, nil
}

func percentDigits(s, what string) (int, int, error) {
	n := 0
	var v int64
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		v = v*10 + int64(s[n]-'0')
		if v > math.MaxInt32 {
			if what == "width" {
				return 0, 0, &PercentError{"ValueError", "width too big"}
			}
			return 0, 0, &PercentError{"ValueError", "precision too big"}
		}
		n++
	}
	if v > MaxWidth {
		return 0, 0, &LimitError{What: what, Value: v}
	}
	return int(v), n, nil
}

// pad applies width, '-' and '0' to sign+prefix+body.
func (p PercentPart) pad(sign, prefix, body string, numeric bool) string {
	n := utf8.RuneCountInString(sign+prefix) + utf8.RuneCountInString(body)
	w := p.Width
	if w <= n {
		return sign + prefix + body
	}
	k := w - n
	switch {
	case p.Minus:
		return sign + prefix + body + strings.Repeat(" ", k)
	case p.Zero && numeric:
		return sign + prefix + strings.Repeat("0", k) + body
	default:
		return strings.Repeat(" ", k) + sign + prefix + body
	}
}

func (p PercentPart) sign(neg bool) string {
	switch {
	case neg:
		return "-"
	case p.Plus:
		return "+"
	case p.Space:
		return " "
	}
	return ""
}

// PercentInt renders an int for d i u o x X (and e E f F g G by converting
// to float, c by code point).
func PercentInt(v *big.Int, p PercentPart) (string, error) {
	switch p.Conv {
	case 'e', 'E', 'f', 'F', 'g', 'G':
		f, acc := new(big.Float).SetInt(v).Float64()
		if math.IsInf(f, 0) && acc != big.Exact {
			return "", &OverflowError{Msg: "int too large to convert to float"}
		}
		return PercentFloat(f, p)
	case 'c':
		if v.Sign() < 0 || v.Cmp(big.NewInt(0x10ffff)) > 0 {
			return "", &OverflowError{Msg: MsgCharRange}
		}
		return PercentStr(string(rune(v.Int64())), p), nil
	case 'r', 's', 'a':
		return PercentStr(v.String(), p), nil
	}
	neg := v.Sign() < 0
	a := new(big.Int).Abs(v)
	var digits, prefix string
	switch p.Conv {
	case 'o':
		digits, prefix = a.Text(8), "0o"
	case 'x':
		digits, prefix = a.Text(16), "0x"
	case 'X':
		digits, prefix = strings.ToUpper(a.Text(16)), "0X"
	default:
		digits = a.Text(10)
	}
	if !p.Alt {
		prefix = ""
	}
	if p.Prec > len(digits) {
		digits = strings.Repeat("0", p.Prec-len(digits)) + digits
	}
	return p.pad(p.sign(neg), prefix, digits, true), nil
}

// PercentFloat renders a float for e E f F g G (and d i u o x X by
// truncation toward zero as CPython's int(), r s a via FloatRepr).
func PercentFloat(f float64, p PercentPart) (string, error) {
	switch p.Conv {
	case 'd', 'i', 'u':
		if math.IsInf(f, 0) {
			return "", &OverflowError{Msg: "cannot convert float infinity to integer"}
		}
		if math.IsNaN(f) {
			return "", &PercentError{"ValueError", "cannot convert float NaN to integer"}
		}
		b, _ := new(big.Float).SetFloat64(math.Trunc(f)).Int(nil)
		return PercentInt(b, p)
	case 'o', 'x', 'X':
		return "", &PercentError{"TypeError", MsgNumberRequired(p.Conv, "float")}
	case 'c':
		return "", &PercentError{"TypeError", MsgCharNeedsChar}
	case 'r', 's', 'a':
		return PercentStr(FloatRepr(f), p), nil
	}
	prec := p.Prec
	if prec < 0 {
		prec = 6
	}
	neg := math.Signbit(f) && !math.IsNaN(f)
	body := floatBody(math.Abs(f), rune(p.Conv), prec, p.Alt, false)
	finite := !math.IsInf(f, 0) && !math.IsNaN(f)
	_ = strconv.Itoa
	return p.pad(p.sign(neg), "", body, finite || true), nil
}

// PercentStr renders text for s r a c: the caller passes str(x), repr(x) or
// ascii(x). The precision truncates by code points.
func PercentStr(s string, p PercentPart) string {
	if p.Prec >= 0 && utf8.RuneCountInString(s) > p.Prec {
		s = string([]rune(s)[:p.Prec])
	}
	return p.pad("", "", s, false)
}
