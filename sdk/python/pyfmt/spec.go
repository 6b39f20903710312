package pyfmt

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxWidth caps the width and precision of a format spec (see the package doc).
const MaxWidth = 1 << 20

// LimitError reports a width or precision above MaxWidth.
type LimitError struct {
	What  string // "width" or "precision"
	Value int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("format %s %d exceeds the sandbox limit of %d", e.What, e.Value, MaxWidth)
}

// Spec is a parsed format spec:
// [[fill]align][sign][z][#][0][width][grouping][.precision][type].
type Spec struct {
	Raw       string // the spec text as given
	Fill      rune   // 0 when not given
	Align     byte   // '<', '>', '^', '=' or 0
	Sign      byte   // '+', '-', ' ' or 0
	NoNegZero bool   // 'z'
	Alt       bool   // '#'
	Zero      bool   // '0' before the width
	Width     int    // -1 when not given
	Grouping  byte   // ',', '_' or 0
	Precision int    // -1 when not given
	Type      rune   // presentation type or 0
	extra     bool   // more than one character after the precision
}

// SpecError is a ValueError raised for a format spec. Its text may name the
// object's type; IntFormat, FloatFormat and StrFormat fill it in.
type SpecError struct {
	Msg string
}

func (e *SpecError) Error() string { return e.Msg }

func specErr(format string, a ...any) error { return &SpecError{Msg: fmt.Sprintf(format, a...)} }

// ParseSpec parses the syntax of a format spec. Checks that depend on the
// object's type (and the "Invalid format specifier ... for object of type"
// text) come from FormatInt, FormatFloat and FormatStr.
func ParseSpec(spec string) (Spec, error) {
	s := Spec{Raw: spec, Width: -1, Precision: -1}
	rs := []rune(spec)
	i := 0
	isAlign := func(r rune) bool { return r == '<' || r == '>' || r == '^' || r == '=' }
	if len(rs) >= 2 && isAlign(rs[1]) {
		s.Fill, s.Align = rs[0], byte(rs[1])
		i = 2
	} else if len(rs) >= 1 && isAlign(rs[0]) {
		s.Align = byte(rs[0])
		i = 1
	}
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-' || rs[i] == ' ') {
		s.Sign = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == 'z' {
		s.NoNegZero = true
		i++
	}
	if i < len(rs) && rs[i] == '#' {
		s.Alt = true
		i++
	}
	if s.Fill == 0 && i < len(rs) && rs[i] == '0' {
		s.Zero = true
		i++
	}
	w, n, err := parseDigits(rs[i:], "width")
	if err != nil {
		return s, err
	}
	if n > 0 {
		s.Width = w
		i += n
	}
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		s.Grouping = byte(rs[i])
		i++
		if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
			return s, specErr("Cannot specify both ',' and '_'.")
		}
	}
	if i < len(rs) && rs[i] == '.' {
		i++
		p, n, err := parseDigits(rs[i:], "precision")
		if err != nil {
			return s, err
		}
		if n == 0 {
			return s, specErr("Format specifier missing precision")
		}
		s.Precision = p
		i += n
	}
	switch rest := rs[i:]; {
	case len(rest) > 1:
		s.extra = true
	case len(rest) == 1:
		s.Type = rest[0]
	}
	return s, nil
}

func parseDigits(rs []rune, what string) (int, int, error) {
	n := 0
	var v int64
	for n < len(rs) && rs[n] >= '0' && rs[n] <= '9' {
		if v > (math.MaxInt64-9)/10 {
			return 0, 0, specErr("Too many decimal digits in format string")
		}
		v = v*10 + int64(rs[n]-'0')
		n++
	}
	if v > MaxWidth {
		return 0, 0, &LimitError{What: what, Value: v}
	}
	return int(v), n, nil
}

// check runs CPython's post-parse checks given the default type of the object.
func (s *Spec) check(typeName string, defaultType rune) error {
	if s.extra {
		return specErr("Invalid format specifier '%s' for object of type '%s'", s.Raw, typeName)
	}
	t := s.Type
	if t == 0 {
		t = defaultType
	}
	if s.Grouping != 0 {
		switch t {
		case 'd', 'e', 'f', 'g', 'E', 'G', '%', 'F', 0:
		case 'b', 'o', 'x', 'X':
			if s.Grouping == '_' {
				break
			}
			fallthrough
		default:
			return specErr("Cannot specify '%c' with %s.", s.Grouping, quoteType(t))
		}
	}
	return nil
}

func quoteType(t rune) string {
	if t > 32 && t < 127 {
		return "'" + string(t) + "'"
	}
	return fmt.Sprintf("'\\x%x'", t)
}

func unknownCode(t rune, typeName string) error {
	if t > 32 && t < 127 {
		return specErr("Unknown format code '%c' for object of type '%s'", t, typeName)
	}
	return specErr("Unknown format code '\\x%x' for object of type '%s'", t, typeName)
}

// IntFormat is format(v, spec) for an int.
func IntFormat(v *big.Int, spec string) (string, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return "", err
	}
	return FormatInt(v, s)
}

// FloatFormat is format(f, spec) for a float.
func FloatFormat(f float64, spec string) (string, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return "", err
	}
	return FormatFloat(f, s)
}

// StrFormat is format(s, spec) for a str.
func StrFormat(str, spec string) (string, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return "", err
	}
	return FormatStr(str, s)
}

// OverflowError is CPython's OverflowError (raised for %c out of range and
// for ints too large for a float presentation type).
type OverflowError struct{ Msg string }

func (e *OverflowError) Error() string { return e.Msg }

// FormatInt formats an int with a parsed spec, as int.__format__.
func FormatInt(v *big.Int, s Spec) (string, error) {
	if err := s.check("int", 'd'); err != nil {
		return "", err
	}
	t := s.Type
	switch t {
	case 0, 'd', 'n', 'b', 'o', 'x', 'X', 'c':
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
		f, acc := new(big.Float).SetInt(v).Float64()
		if math.IsInf(f, 0) && acc != big.Exact {
			return "", &OverflowError{Msg: "int too large to convert to float"}
		}
		return FormatFloat(f, s)
	default:
		return "", unknownCode(t, "int")
	}
	if s.Precision >= 0 {
		return "", specErr("Precision not allowed in integer format specifier")
	}
	if s.NoNegZero {
		return "", specErr("Negative zero coercion (z) not allowed in integer format specifier")
	}
	if t == 'c' {
		if s.Sign != 0 {
			return "", specErr("Sign not allowed with integer format specifier 'c'")
		}
		if s.Alt {
			return "", specErr("Alternate form (#) not allowed with integer format specifier 'c'")
		}
		if !v.IsInt64() {
			return "", &OverflowError{Msg: "Python int too large to convert to C long"}
		}
		if v.Sign() < 0 || v.Cmp(big.NewInt(0x10ffff)) > 0 {
			return "", &OverflowError{Msg: "%c arg not in range(0x110000)"}
		}
		r := rune(v.Int64())
		return layout(s, '<', "", "", string(r), "", 0), nil
	}
	neg := v.Sign() < 0
	a := new(big.Int).Abs(v)
	var digits, prefix string
	group := 3
	switch t {
	case 'b':
		digits, prefix, group = a.Text(2), "0b", 4
	case 'o':
		digits, prefix, group = a.Text(8), "0o", 4
	case 'x':
		digits, prefix, group = a.Text(16), "0x", 4
	case 'X':
		digits, prefix, group = strings.ToUpper(a.Text(16)), "0X", 4
	default:
		digits = a.Text(10)
	}
	if !s.Alt {
		prefix = ""
	}
	return layout(s, '>', signOf(neg, s.Sign), prefix, digits, "", groupSize(s, group)), nil
}

func groupSize(s Spec, n int) int {
	if s.Grouping == 0 {
		return 0
	}
	if s.Grouping == ',' {
		return 3
	}
	return n
}

func signOf(neg bool, sign byte) string {
	if neg {
		return "-"
	}
	switch sign {
	case '+':
		return "+"
	case ' ':
		return " "
	}
	return ""
}

// layout assembles sign, prefix, the integer digits (grouped every group
// digits when group > 0) and the rest, then pads to the width.
func layout(s Spec, defAlign byte, sign, prefix, digits, rest string, group int) string {
	fill := s.Fill
	align := s.Align
	if s.Zero {
		if fill == 0 {
			fill = '0'
		}
		if align == 0 && defAlign == '>' {
			align = '='
		}
	}
	if fill == 0 {
		fill = ' '
	}
	if align == 0 {
		align = defAlign
	}
	sep := string(rune(s.Grouping))
	if group > 0 {
		minw := 0
		if fill == '0' && align == '=' {
			minw = s.Width - utf8.RuneCountInString(sign+prefix+rest)
		}
		digits = groupDigits(digits, sep, group, minw)
	}
	body := digits + rest
	n := utf8.RuneCountInString(sign+prefix) + utf8.RuneCountInString(body)
	pad := s.Width - n
	if pad <= 0 {
		return sign + prefix + body
	}
	p := func(k int) string { return strings.Repeat(string(fill), k) }
	switch align {
	case '<':
		return sign + prefix + body + p(pad)
	case '^':
		return p(pad/2) + sign + prefix + body + p(pad-pad/2)
	case '=':
		return sign + prefix + p(pad) + body
	default:
		return p(pad) + sign + prefix + body
	}
}

// groupDigits inserts sep every n digits from the right; with minw > 0 it
// pads with zeros (and separators) until the result is at least minw long,
// never starting with a separator (CPython's zero padding with grouping).
func groupDigits(d, sep string, n, minw int) string {
	glen := func(k int) int { return k + (k-1)/n }
	if k := len(d); glen(k) < minw {
		// smallest k' > k with glen(k') >= minw
		k2 := minw - minw/(n+1)
		if k2 < k {
			k2 = k
		}
		for k2 > k && glen(k2-1) >= minw {
			k2--
		}
		for glen(k2) < minw {
			k2++
		}
		d = strings.Repeat("0", k2-k) + d
	}
	b := make([]byte, 0, glen(len(d)))
	first := len(d) % n
	if first == 0 {
		first = n
	}
	b = append(b, d[:first]...)
	for i := first; i < len(d); i += n {
		b = append(b, sep[0])
		b = append(b, d[i:i+n]...)
	}
	return string(b)
}

// FormatStr formats a str with a parsed spec, as str.__format__.
func FormatStr(str string, s Spec) (string, error) {
	if err := s.check("str", 's'); err != nil {
		return "", err
	}
	if s.Type != 0 && s.Type != 's' {
		return "", unknownCode(s.Type, "str")
	}
	if s.Sign == ' ' {
		return "", specErr("Space not allowed in string format specifier")
	}
	if s.Sign != 0 {
		return "", specErr("Sign not allowed in string format specifier")
	}
	if s.NoNegZero {
		return "", specErr("Negative zero coercion (z) not allowed in string format specifier")
	}
	if s.Alt {
		return "", specErr("Alternate form (#) not allowed in string format specifier")
	}
	if s.Align == '=' {
		return "", specErr("'=' alignment not allowed in string format specifier")
	}
	if s.Precision >= 0 && utf8.RuneCountInString(str) > s.Precision {
		rs := []rune(str)
		str = string(rs[:s.Precision])
	}
	if s.Zero && s.Align == 0 {
		s.Align = '<'
	}
	return layout(s, '<', "", "", str, "", 0), nil
}

// FormatFloat formats a float with a parsed spec, as float.__format__.
func FormatFloat(f float64, s Spec) (string, error) {
	if err := s.check("float", 0); err != nil {
		return "", err
	}
	t := s.Type
	prec := s.Precision
	addDot0 := false
	switch t {
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
	case 'n':
		t = 'g'
	case 0:
		addDot0 = true
		if prec < 0 {
			t = 'r'
		} else {
			t = 'g'
		}
	default:
		return "", unknownCode(t, "float")
	}
	if prec < 0 {
		prec = 6
	}
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	if t == '%' {
		a *= 100
	}
	body := floatBody(a, t, prec, s.Alt, addDot0)
	if s.NoNegZero && neg && !math.IsInf(a, 0) && isZeroText(body) {
		neg = false
	}
	if t == '%' {
		body += "%"
	}
	if math.IsInf(a, 0) || math.IsNaN(a) {
		return layout(s, '>', signOf(neg, s.Sign), "", "", body, 0), nil
	}
	// Split the integer digits (grouped) from the rest.
	k := 0
	for k < len(body) && body[k] >= '0' && body[k] <= '9' {
		k++
	}
	return layout(s, '>', signOf(neg, s.Sign), "", body[:k], body[k:], groupSize(s, 3)), nil
}

func isZeroText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' {
			return false
		}
	}
	return true
}

// floatBody renders a non-negative float (no sign) for presentation type t
// in e E f F g G r '%'. addDot0 is CPython's Py_DTSF_ADD_DOT_0 (the 'none'
// presentation type).
func floatBody(a float64, t rune, prec int, alt, addDot0 bool) string {
	upper := t == 'E' || t == 'F' || t == 'G'
	if math.IsInf(a, 0) || math.IsNaN(a) {
		s := "inf"
		if math.IsNaN(a) {
			s = "nan"
		}
		if upper {
			s = strings.ToUpper(s)
		}
		return s
	}
	var out string
	switch t {
	case 'r':
		r := FloatRepr(a)
		if alt && !strings.ContainsAny(r, ".") {
			if i := strings.IndexByte(r, 'e'); i >= 0 {
				r = r[:i] + "." + r[i:]
			}
		}
		return r
	case 'e', 'E':
		out = strconv.FormatFloat(a, 'e', prec, 64)
		if alt && prec == 0 {
			i := strings.IndexByte(out, 'e')
			out = out[:i] + "." + out[i:]
		}
	case 'f', 'F', '%':
		out = strconv.FormatFloat(a, 'f', prec, 64)
		if alt && prec == 0 {
			out += "."
		}
	case 'g', 'G':
		if prec == 0 {
			prec = 1
		}
		var digits string
		var decpt int
		if a == 0 {
			digits, decpt = strings.Repeat("0", prec), 1
		} else {
			digits, decpt = splitE(strconv.FormatFloat(a, 'e', prec-1, 64))
		}
		limit := prec
		if addDot0 {
			limit = prec - 1
		}
		if !alt {
			digits = strings.TrimRight(digits, "0")
			if digits == "" {
				digits = "0"
			}
		}
		if decpt <= -4 || decpt > limit {
			out = expForm(digits, decpt, alt)
		} else {
			minFrac := 0
			if alt {
				minFrac = prec - decpt
			}
			out = fixedForm(digits, decpt, minFrac)
			if alt && !strings.Contains(out, ".") {
				out += "."
			}
			if addDot0 && !strings.Contains(out, ".") {
				out += ".0"
			}
		}
	}
	if upper {
		out = strings.ToUpper(out)
	}
	return out
}
