package pyjson

import (
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// maxIntDigits is CPython 3.11's default sys.get_int_max_str_digits().
const maxIntDigits = 4300

// Loads is json.loads(s).
func Loads(s string) (any, error) {
	d := &decoder{s: decodeRunes(s), doc: s}
	if len(d.s) > 0 && d.s[0] == 0xfeff {
		return nil, d.err("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	i := d.ws(0)
	v, end, err := d.value(i, 0)
	if err != nil {
		return nil, err
	}
	end = d.ws(end)
	if end != len(d.s) {
		return nil, d.err("Extra data", end)
	}
	return v, nil
}

// decodeRunes decodes s into code points; a byte that is not UTF-8 becomes
// U+DC00+b.
func decodeRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			r = 0xdc00 + rune(s[i])
		}
		out = append(out, r)
		i += n
	}
	return out
}

type decoder struct {
	s   []rune
	doc string
}

func (d *decoder) err(msg string, pos int) error {
	line, last := 1, -1
	for i := 0; i < pos && i < len(d.s); i++ {
		if d.s[i] == '\n' {
			line++
			last = i
		}
	}
	return &DecodeError{Msg: msg, Pos: pos, Line: line, Col: pos - last, Document: d.doc}
}

func (d *decoder) ws(i int) int {
	for i < len(d.s) {
		switch d.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (d *decoder) has(i int, word string) bool {
	for j := 0; j < len(word); j++ {
		if i+j >= len(d.s) || d.s[i+j] != rune(word[j]) {
			return false
		}
	}
	return true
}

// value is the scanner's scan_once: errExpecting (StopIteration) is reported
// as "Expecting value" at i by the caller chain.
func (d *decoder) value(i, depth int) (any, int, error) {
	if i >= len(d.s) {
		return nil, i, d.err("Expecting value", i)
	}
	switch c := d.s[i]; {
	case c == '"':
		return d.str(i + 1)
	case c == '{':
		if depth >= MaxDepth {
			return nil, i, &ValueError{Msg: "maximum recursion depth exceeded while decoding a JSON object from a unicode string"}
		}
		return d.object(i+1, depth+1)
	case c == '[':
		if depth >= MaxDepth {
			return nil, i, &ValueError{Msg: "maximum recursion depth exceeded while decoding a JSON array from a unicode string"}
		}
		return d.array(i+1, depth+1)
	case c == 'n' && d.has(i, "null"):
		return nil, i + 4, nil
	case c == 't' && d.has(i, "true"):
		return true, i + 4, nil
	case c == 'f' && d.has(i, "false"):
		return false, i + 5, nil
	case c == 'N' && d.has(i, "NaN"):
		return nan(), i + 3, nil
	case c == 'I' && d.has(i, "Infinity"):
		return inf(1), i + 8, nil
	case c == '-' && d.has(i, "-Infinity"):
		return inf(-1), i + 9, nil
	}
	return d.number(i)
}

func (d *decoder) number(i int) (any, int, error) {
	s := d.s
	j := i
	if j < len(s) && s[j] == '-' {
		j++
	}
	digit := func(k int) bool { return k < len(s) && s[k] >= '0' && s[k] <= '9' }
	switch {
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		for digit(j) {
			j++
		}
	case j < len(s) && s[j] == '0':
		j++
	default:
		return nil, i, d.err("Expecting value", i)
	}
	isFloat := false
	if j < len(s) && s[j] == '.' && digit(j+1) {
		isFloat = true
		j += 2
		for digit(j) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if digit(k) {
			for digit(k) {
				k++
			}
			isFloat = true
			j = k
		}
	}
	text := string(s[i:j])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
				return nil, i, &ValueError{Msg: fmt.Sprintf("could not convert string to float: %q", text)}
			}
		}
		return f, j, nil
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, j, nil
	}
	nd := len(text)
	if text[0] == '-' {
		nd--
	}
	if nd > maxIntDigits {
		return nil, i, &ValueError{Msg: fmt.Sprintf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxIntDigits, nd)}
	}
	b, _ := new(big.Int).SetString(text, 10)
	return b, j, nil
}

func hexVal(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return -1
}

// str is scanstring (strict) from begin, just after the opening quote.
func (d *decoder) str(begin int) (any, int, error) {
	s := d.s
	var out []rune
	i := begin
	for {
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			if s[i] <= 0x1f {
				return nil, i, d.err("Invalid control character at", i)
			}
			out = append(out, s[i])
			i++
		}
		if i >= len(s) {
			return nil, i, d.err("Unterminated string starting at", begin-1)
		}
		if s[i] == '"' {
			return encodeRunes(out), i + 1, nil
		}
		i++ // backslash
		if i >= len(s) {
			return nil, i, d.err("Unterminated string starting at", begin-1)
		}
		c := s[i]
		if c != 'u' {
			var r rune
			switch c {
			case '"', '\\', '/':
				r = c
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return nil, i, d.err("Invalid \\escape", i-1)
			}
			out = append(out, r)
			i++
			continue
		}
		next := i + 1
		end := next + 4
		if end >= len(s) {
			return nil, i, d.err("Invalid \\uXXXX escape", next-1)
		}
		var cp rune
		for k := next; k < end; k++ {
			h := hexVal(s[k])
			if h < 0 {
				return nil, i, d.err("Invalid \\uXXXX escape", next-1)
			}
			cp = cp<<4 | rune(h)
		}
		if cp >= 0xd800 && cp <= 0xdbff && end+6 < len(s) && s[end] == '\\' && s[end+1] == 'u' {
			var c2 rune
			for k := end + 2; k < end+6; k++ {
				h := hexVal(s[k])
				if h < 0 {
					return nil, i, d.err("Invalid \\uXXXX escape", end+1)
				}
				c2 = c2<<4 | rune(h)
			}
			if c2 >= 0xdc00 && c2 <= 0xdfff {
				cp = 0x10000 + (cp-0xd800)<<10 + (c2 - 0xdc00)
				end += 6
			}
		}
		out = append(out, cp)
		i = end
	}
}

// encodeRunes is the inverse of decodeRunes: U+DC80..U+DCFF become the byte
// they stand for, other surrogates U+FFFD.
func encodeRunes(rs []rune) string {
	b := make([]byte, 0, len(rs))
	for _, r := range rs {
		switch {
		case r >= 0xdc80 && r <= 0xdcff:
			b = append(b, byte(r-0xdc00))
		case r >= 0xd800 && r <= 0xdfff:
			b = utf8.AppendRune(b, utf8.RuneError)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

func (d *decoder) object(i, depth int) (any, int, error) {
	o := &Object{}
	i = d.ws(i)
	if i < len(d.s) && d.s[i] == '}' {
		return o, i + 1, nil
	}
	for {
		if i >= len(d.s) || d.s[i] != '"' {
			return nil, i, d.err("Expecting property name enclosed in double quotes", i)
		}
		k, j, err := d.str(i + 1)
		if err != nil {
			return nil, j, err
		}
		i = d.ws(j)
		if i >= len(d.s) || d.s[i] != ':' {
			return nil, i, d.err("Expecting ':' delimiter", i)
		}
		i = d.ws(i + 1)
		v, j, err := d.value(i, depth)
		if err != nil {
			return nil, j, err
		}
		o.Set(k, v)
		i = d.ws(j)
		if i < len(d.s) && d.s[i] == '}' {
			return o, i + 1, nil
		}
		if i >= len(d.s) || d.s[i] != ',' {
			return nil, i, d.err("Expecting ',' delimiter", i)
		}
		i = d.ws(i + 1)
	}
}

func (d *decoder) array(i, depth int) (any, int, error) {
	out := []any{}
	i = d.ws(i)
	if i < len(d.s) && d.s[i] == ']' {
		return out, i + 1, nil
	}
	for {
		v, j, err := d.value(i, depth)
		if err != nil {
			return nil, j, err
		}
		out = append(out, v)
		i = d.ws(j)
		if i < len(d.s) && d.s[i] == ']' {
			return out, i + 1, nil
		}
		if i >= len(d.s) || d.s[i] != ',' {
			return nil, i, d.err("Expecting ',' delimiter", i)
		}
		i = d.ws(i + 1)
	}
}
