package python

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/sdk/python/pyfmt"
)

// formatSpec is a parsed format-spec mini-language string.
type formatSpec struct {
	fill      rune
	align     byte // < > ^ = or 0
	sign      byte // + - space or 0
	alt       bool
	zero      bool
	width     int
	grouping  byte // , _ or 0
	precision int  // -1: none
	typ       byte
}

func parseSpec(t *Thread, spec string) formatSpec {
	fs := formatSpec{fill: ' ', precision: -1}
	s := spec
	if r, n := utf8.DecodeRuneInString(s); n > 0 && n < len(s)+1 {
		if len(s) > n && strings.IndexByte("<>^=", s[n]) >= 0 {
			fs.fill = r
			fs.align = s[n]
			s = s[n+1:]
		} else if len(s) > 0 && strings.IndexByte("<>^=", s[0]) >= 0 {
			fs.align = s[0]
			s = s[1:]
		}
	}
	if len(s) > 0 && strings.IndexByte("+- ", s[0]) >= 0 {
		fs.sign = s[0]
		s = s[1:]
	}
	if len(s) > 0 && s[0] == 'z' {
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '#' {
		fs.alt = true
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '0' {
		fs.zero = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 {
		fs.width, _ = strconv.Atoi(s[:i])
		if fs.width > 10000 {
			t.raise(ValueError, "format width %d is too large for this sandbox", fs.width)
		}
		s = s[i:]
	}
	if len(s) > 0 && (s[0] == ',' || s[0] == '_') {
		fs.grouping = s[0]
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '.' {
		s = s[1:]
		i = 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			t.raise(ValueError, "Format specifier missing precision")
		}
		fs.precision, _ = strconv.Atoi(s[:i])
		if fs.precision > 1000 {
			t.raise(ValueError, "precision %d is too large for this sandbox", fs.precision)
		}
		s = s[i:]
	}
	if len(s) == 1 {
		fs.typ = s[0]
	} else if len(s) > 1 {
		t.raise(ValueError, "Invalid format specifier '%s'", spec)
	}
	if fs.zero && fs.align == 0 {
		fs.fill = '0'
		fs.align = '='
	}
	return fs
}

// formatValue is format(v, spec).
func formatValue(t *Thread, v Value, spec string) string {
	if spec == "" {
		return strCharged(t, v).(string)
	}
	// int, float and str formatting is pylib's pyfmt (CPython 3.11 tables)
	var out string
	var err error
	switch x := v.(type) {
	case string:
		out, err = pyfmt.StrFormat(x, spec)
	case bool:
		out, err = pyfmt.IntFormat(big.NewInt(b2i(x)), spec)
	case int64:
		out, err = pyfmt.IntFormat(big.NewInt(x), spec)
	case *big.Int:
		out, err = pyfmt.IntFormat(x, spec)
	case float64:
		out, err = pyfmt.FloatFormat(x, spec)
	default:
		t.raise(TypeError, "unsupported format string passed to %s.__format__", typeName(v))
	}
	if err != nil {
		var oe *pyfmt.OverflowError
		if errors.As(err, &oe) {
			t.raise(OverflowError, "%s", oe.Msg)
		}
		t.raise(ValueError, "%s", err.Error())
	}
	t.Charge("format", uint64(len(out)), uint64(len(out))/kib)
	return out
}

// formatValueOwn is the interpreter's own format-spec implementation, kept
// for %-formatting's conversions.
func formatValueOwn(t *Thread, v Value, spec string) string {
	fs := parseSpec(t, spec)
	switch x := v.(type) {
	case string:
		if fs.typ != 0 && fs.typ != 's' {
			t.raise(ValueError, "Unknown format code '%c' for object of type 'str'", fs.typ)
		}
		if fs.sign != 0 {
			t.raise(ValueError, "Sign not allowed in string format specifier")
		}
		if fs.align == '=' {
			t.raise(ValueError, "'=' alignment not allowed in string format specifier")
		}
		if fs.precision >= 0 && strLen(x) > fs.precision {
			x = x[:runeOffset(x, fs.precision)]
		}
		return pad(x, fs, '<')
	case bool:
		return formatInt(t, big.NewInt(b2i(x)), fs)
	case int64:
		if fs.typ == 0 || strings.IndexByte("bcdoxXn", fs.typ) >= 0 {
			return formatInt(t, big.NewInt(x), fs)
		}
		return formatFloat(t, float64(x), fs)
	case *big.Int:
		if fs.typ == 0 || strings.IndexByte("bcdoxXn", fs.typ) >= 0 {
			return formatInt(t, x, fs)
		}
		f, _ := toFloat(x)
		return formatFloat(t, f, fs)
	case float64:
		return formatFloat(t, x, fs)
	}
	t.raise(TypeError, "unsupported format string passed to %s.__format__", typeName(v))
	return ""
}

func pad(s string, fs formatSpec, def byte) string {
	n := strLen(s)
	if fs.width <= n {
		return s
	}
	fill := strings.Repeat(string(fs.fill), fs.width-n)
	align := fs.align
	if align == 0 {
		align = def
	}
	switch align {
	case '<':
		return s + fill
	case '^':
		left := (fs.width - n) / 2
		return strings.Repeat(string(fs.fill), left) + s + strings.Repeat(string(fs.fill), fs.width-n-left)
	}
	return fill + s
}

// padNumber pads sign+body with alignment, '=' putting fill after the sign.
func padNumber(sign, prefix, body string, fs formatSpec) string {
	if fs.align == '=' {
		n := strLen(sign) + strLen(prefix) + strLen(body)
		if fs.width > n {
			fill := fs.fill
			body = strings.Repeat(string(fill), fs.width-n) + body
		}
		return sign + prefix + body
	}
	return pad(sign+prefix+body, fs, '>')
}

func group(digits string, sep byte, every int) string {
	if len(digits) <= every {
		return digits
	}
	var sb strings.Builder
	first := len(digits) % every
	if first > 0 {
		sb.WriteString(digits[:first])
	}
	for i := first; i < len(digits); i += every {
		if sb.Len() > 0 {
			sb.WriteByte(sep)
		}
		sb.WriteString(digits[i : i+every])
	}
	return sb.String()
}

func signOf(neg bool, fs formatSpec) string {
	switch {
	case neg:
		return "-"
	case fs.sign == '+':
		return "+"
	case fs.sign == ' ':
		return " "
	}
	return ""
}

func formatInt(t *Thread, x *big.Int, fs formatSpec) string {
	if fs.precision >= 0 {
		t.raise(ValueError, "Precision not allowed in integer format specifier")
	}
	neg := x.Sign() < 0
	a := new(big.Int).Abs(x)
	var digits, prefix string
	switch fs.typ {
	case 0, 'd', 'n':
		digits = a.String()
	case 'b':
		digits, prefix = a.Text(2), "0b"
	case 'o':
		digits, prefix = a.Text(8), "0o"
	case 'x':
		digits, prefix = a.Text(16), "0x"
	case 'X':
		digits, prefix = strings.ToUpper(a.Text(16)), "0X"
	case 'c':
		if !x.IsInt64() || x.Int64() < 0 || x.Int64() > 0x10ffff {
			t.raise(OverflowError, "%%c arg not in range(0x110000)")
		}
		return pad(string(rune(x.Int64())), fs, '<')
	default:
		t.raise(ValueError, "Unknown format code '%c' for object of type 'int'", fs.typ)
	}
	if !fs.alt {
		prefix = ""
	}
	if fs.grouping != 0 {
		every := 3
		if fs.typ == 'b' || fs.typ == 'o' || fs.typ == 'x' || fs.typ == 'X' {
			every = 4
		}
		if fs.align == '=' && fs.fill == '0' {
			// zero padding is grouped too
			sign := signOf(neg, fs)
			w := fs.width - len(sign) - len(prefix)
			for len(group(digits, fs.grouping, every)) < w {
				digits = "0" + digits
			}
			return sign + prefix + group(digits, fs.grouping, every)
		}
		digits = group(digits, fs.grouping, every)
	}
	return padNumber(signOf(neg, fs), prefix, digits, fs)
}

func formatFloat(t *Thread, f float64, fs formatSpec) string {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	prec := fs.precision
	var body string
	typ := fs.typ
	switch {
	case math.IsInf(a, 0):
		body = "inf"
		if typ == 'E' || typ == 'F' || typ == 'G' {
			body = "INF"
		}
	case math.IsNaN(a):
		body = "nan"
		if typ == 'E' || typ == 'F' || typ == 'G' {
			body = "NAN"
		}
	default:
		switch typ {
		case 'f', 'F':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a, 'f', prec, 64)
			if fs.alt && prec == 0 {
				body += "."
			}
		case 'e', 'E':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a, 'e', prec, 64)
			if typ == 'E' {
				body = strings.ToUpper(body)
			}
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a*100, 'f', prec, 64) + "%"
		case 'g', 'G', 'n':
			if prec < 0 {
				prec = 6
			}
			if prec == 0 {
				prec = 1
			}
			body = formatG(a, prec, fs.alt)
			if typ == 'G' {
				body = strings.ToUpper(body)
			}
		case 0:
			if prec < 0 {
				body = FloatRepr(a)
			} else {
				if prec == 0 {
					prec = 1
				}
				body = formatG(a, prec, fs.alt)
				if !strings.ContainsAny(body, ".e") {
					body += ".0"
				}
			}
		default:
			t.raise(ValueError, "Unknown format code '%c' for object of type 'float'", typ)
		}
	}
	if fs.grouping != 0 {
		intPart, frac := body, ""
		if i := strings.IndexAny(body, ".e%"); i >= 0 {
			intPart, frac = body[:i], body[i:]
		}
		if fs.align == '=' && fs.fill == '0' {
			sign := signOf(neg, fs)
			w := fs.width - len(sign) - len(frac)
			for len(group(intPart, fs.grouping, 3)) < w {
				intPart = "0" + intPart
			}
			return sign + group(intPart, fs.grouping, 3) + frac
		}
		body = group(intPart, fs.grouping, 3) + frac
	}
	return padNumber(signOf(neg, fs), "", body, fs)
}

// formatG is Python's 'g' presentation with precision p.
func formatG(a float64, p int, alt bool) string {
	if a == 0 {
		if alt {
			return "0." + strings.Repeat("0", p-1)
		}
		return "0"
	}
	e := strconv.FormatFloat(a, 'e', p-1, 64)
	mant, exps, _ := strings.Cut(e, "e") // exps: sign and at least two digits, as Python writes them
	exp, _ := strconv.Atoi(exps)
	var out string
	if exp < -4 || exp >= p {
		if !alt && strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		out = mant + "e" + exps
	} else {
		out = strconv.FormatFloat(a, 'f', max(p-1-exp, 0), 64)
		if !alt && strings.Contains(out, ".") {
			out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
		}
	}
	return out
}

// reprCharged is repr(v), charged by the size of its output.
func reprCharged(t *Thread, v Value) Value {
	checkDigits(t, v)
	n := sizeEstimate(t, v)
	t.Charge("repr()", n, n/kib+1)
	return Repr(v)
}

// checkDigits raises CPython's ValueError for an int of over 4300 decimal
// digits being converted to text.
func checkDigits(t *Thread, v Value) {
	if b, ok := v.(*big.Int); ok && b.BitLen() > 14000 {
		if d := len(new(big.Int).Abs(b).String()); d > maxStrDigits {
			t.raise(ValueError, "Exceeds the limit (%d digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit", maxStrDigits)
		}
	}
}

// strCharged is str(v), charged.
func strCharged(t *Thread, v Value) Value {
	if s, ok := v.(string); ok {
		return s
	}
	checkDigits(t, v)
	n := sizeEstimate(t, v)
	t.Charge("str()", n, n/kib+1)
	return Str(v)
}

// sizeEstimate bounds the bytes of repr(v), walking containers (charged
// one step per element visited).
func sizeEstimate(t *Thread, v Value) uint64 {
	var n uint64
	visited := 0
	var walk func(v Value, depth int)
	walk = func(v Value, depth int) {
		visited++
		if visited%4096 == 0 {
			t.Charge("rendering", 0, 4096)
		}
		if depth > 200 {
			n += 3
			return
		}
		switch x := v.(type) {
		case string:
			n += uint64(len(x))*4 + 2
		case *big.Int:
			n += uint64(x.BitLen())/3 + 2
		case *List:
			n += 2
			for _, e := range x.V {
				if e == Value(x) {
					n += 5
					continue
				}
				walk(e, depth+1)
				n += 2
			}
		case Tuple:
			n += 3
			for _, e := range x {
				walk(e, depth+1)
				n += 2
			}
		case *Dict:
			n += 16
			for _, kv := range x.Items() {
				walk(kv[0], depth+1)
				if kv[1] == Value(x) {
					n += 5
				} else {
					walk(kv[1], depth+1)
				}
				n += 4
			}
		case *Set:
			n += 12
			for _, k := range x.Keys() {
				walk(k, depth+1)
				n += 2
			}
		case *Deque:
			n += 16
			for _, e := range x.V {
				walk(e, depth+1)
				n += 2
			}
		case *Exception:
			n += 32
			for _, a := range x.Args {
				walk(a, depth+1)
			}
		case Object:
			n += uint64(len(x.Repr()))
		default:
			n += 32
		}
	}
	walk(v, 0)
	return n
}

// asciiRepr escapes non-ASCII code points of a repr, like ascii().
func asciiRepr(v Value) Value { return pyfmt.ASCII(v.(string)) }

// partsBuilder collects pieces and joins them once at the end, so that
// the bytes allocated are about the bytes charged (a strings.Builder's
// growth copies several times the output).
type partsBuilder struct {
	parts []string
	lit   []byte
	n     int
}

func (p *partsBuilder) WriteByte(c byte) error {
	p.lit = append(p.lit, c)
	p.n++
	return nil
}

func (p *partsBuilder) WriteString(s string) {
	if len(s) < 64 {
		p.lit = append(p.lit, s...)
	} else {
		if len(p.lit) > 0 {
			p.parts = append(p.parts, string(p.lit))
			p.lit = p.lit[:0]
		}
		p.parts = append(p.parts, s)
	}
	p.n += len(s)
}

func (p *partsBuilder) Len() int { return p.n }

func (p *partsBuilder) String() string {
	if len(p.lit) > 0 {
		p.parts = append(p.parts, string(p.lit))
		p.lit = nil
	}
	return strings.Join(p.parts, "")
}

// percentFormat is format % args.
func percentFormat(t *Thread, format string, arg Value) Value {
	var args []Value
	var mapping *Dict
	switch a := arg.(type) {
	case Tuple:
		args = a
	case *Dict:
		mapping = a
		args = []Value{a}
	default:
		args = []Value{a}
	}
	t.Charge("%", uint64(len(format))+strHeader, uint64(len(format))/kib+1)
	var sb partsBuilder
	ai := 0
	next := func() Value {
		if ai >= len(args) {
			t.raise(TypeError, "not enough arguments for format string")
		}
		ai++
		return args[ai-1]
	}
	usedMapping := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			t.raise(ValueError, "incomplete format")
		}
		var val Value
		haveVal := false
		if format[i] == '(' {
			j := strings.IndexByte(format[i:], ')')
			if j < 0 || mapping == nil {
				if mapping == nil {
					t.raise(TypeError, "format requires a mapping")
				}
				t.raise(ValueError, "incomplete format key")
			}
			key := format[i+1 : i+j]
			v, ok := mapping.Get(key)
			if !ok {
				panic(&Exception{Class: KeyError, Args: []Value{key}, Line: t.line})
			}
			val, haveVal = v, true
			usedMapping = true
			i += j + 1
		}
		fs := formatSpec{fill: ' ', precision: -1}
		for ; i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0; i++ {
			switch format[i] {
			case '-':
				fs.align = '<'
			case '+':
				fs.sign = '+'
			case ' ':
				if fs.sign == 0 {
					fs.sign = ' '
				}
			case '#':
				fs.alt = true
			case '0':
				fs.zero = true
			}
		}
		if i < len(format) && format[i] == '*' {
			w, ok := next().(int64)
			if !ok {
				t.raise(TypeError, "* wants int")
			}
			fs.width = int(min(w, 10000))
			i++
		}
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			fs.width = fs.width*10 + int(format[i]-'0')
			if fs.width > 10000 {
				t.raise(ValueError, "width too big")
			}
		}
		if i < len(format) && format[i] == '.' {
			i++
			fs.precision = 0
			for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				fs.precision = fs.precision*10 + int(format[i]-'0')
				if fs.precision > 1000 {
					t.raise(ValueError, "precision too big")
				}
			}
		}
		for i < len(format) && strings.IndexByte("hlL", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			t.raise(ValueError, "incomplete format")
		}
		conv := format[i]
		if conv == '%' {
			sb.WriteByte('%')
			continue
		}
		if !haveVal {
			val = next()
		}
		if fs.align == '<' {
			fs.zero = false
		}
		if fs.zero {
			fs.fill = '0'
			fs.align = '='
		}
		if fs.align == 0 {
			fs.align = '>'
		}
		switch conv {
		case 's', 'r', 'a':
			var s string
			switch conv {
			case 's':
				s = strCharged(t, val).(string)
			case 'r':
				s = reprCharged(t, val).(string)
			default:
				s = asciiRepr(reprCharged(t, val)).(string)
			}
			if fs.precision >= 0 && strLen(s) > fs.precision {
				s = s[:runeOffset(s, fs.precision)]
			}
			if fs.align == '=' {
				fs.align = '>'
				fs.fill = ' '
			}
			t.Charge("%", uint64(len(s))*2+uint64(fs.width), uint64(len(s))/kib)
			sb.WriteString(pad(s, fs, '>'))
		case 'd', 'i', 'u', 'x', 'X', 'o', 'c':
			if conv == 'c' {
				switch x := val.(type) {
				case string:
					sb.WriteString(pad(x, fs, '>'))
				case int64:
					sb.WriteString(pad(string(rune(x)), fs, '>'))
				default:
					t.raise(TypeError, "%%c requires int or char")
				}
				continue
			}
			var b *big.Int
			switch x := val.(type) {
			case float64:
				if math.IsInf(x, 0) || math.IsNaN(x) {
					t.raise(OverflowError, "cannot convert float infinity to integer")
				}
				b, _ = new(big.Float).SetFloat64(math.Trunc(x)).Int(nil)
			default:
				var ok bool
				b, ok = toBig(val)
				if !ok {
					t.raise(TypeError, "%%%c format: a real number is required, not %s", conv, typeName(val))
				}
			}
			ifs := fs
			ifs.typ = map[byte]byte{'d': 'd', 'i': 'd', 'u': 'd', 'x': 'x', 'X': 'X', 'o': 'o'}[conv]
			ifs.precision = -1
			digits := formatInt(t, b, formatSpec{fill: ' ', precision: -1, typ: ifs.typ, alt: fs.alt})
			neg := strings.HasPrefix(digits, "-")
			digits = strings.TrimPrefix(digits, "-")
			prefix := ""
			if fs.alt && len(digits) > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X' || digits[1] == 'o') {
				prefix, digits = digits[:2], digits[2:]
			}
			if fs.precision > 0 {
				for len(digits) < fs.precision {
					digits = "0" + digits
				}
			}
			sb.WriteString(padNumber(signOf(neg, fs), prefix, digits, fs))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			f, ok := toFloat(val)
			if !ok || !isNumber(val) {
				t.raise(TypeError, "must be real number, not %s", typeName(val))
			}
			ffs := fs
			ffs.typ = conv
			if ffs.precision < 0 {
				ffs.precision = 6
			}
			sb.WriteString(formatFloat(t, f, ffs))
		default:
			t.raise(ValueError, "unsupported format character '%c' (0x%x) at index %d", conv, conv, i)
		}
		if sb.Len() > 1<<24 {
			t.Charge("%", uint64(sb.Len()), 0)
		}
	}
	if mapping == nil && ai < len(args) {
		t.raise(TypeError, "not all arguments converted during string formatting")
	}
	_ = usedMapping
	out := sb.String()
	t.Charge("%", uint64(len(out)), uint64(len(out))/kib)
	return out
}

// strFormat is format.format(*args, **kw).
func strFormat(t *Thread, format string, args []Value, kw []KV) string {
	var sb strings.Builder
	auto := 0
	manual := false
	var render func(s string, depth int) string
	render = func(s string, depth int) string {
		var sb partsBuilder
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == '}' {
				if i+1 < len(s) && s[i+1] == '}' {
					sb.WriteByte('}')
					i++
					continue
				}
				t.raise(ValueError, "Single '}' encountered in format string")
			}
			if c != '{' {
				sb.WriteByte(c)
				continue
			}
			if i+1 < len(s) && s[i+1] == '{' {
				sb.WriteByte('{')
				i++
				continue
			}
			j := matchingBrace(s, i)
			if j >= len(s) {
				t.raise(ValueError, "expected '}' before end of string")
			}
			field := s[i+1 : j]
			i = j
			name, spec := field, ""
			conv := byte(0)
			// split name!conv:spec (name may contain [..])
			k := 0
			for k < len(name) && name[k] != '!' && name[k] != ':' {
				if name[k] == '[' {
					for k < len(name) && name[k] != ']' {
						k++
					}
				}
				k++
			}
			if k < len(name) {
				rest := name[k:]
				name = name[:k]
				if rest[0] == '!' {
					if len(rest) < 2 {
						t.raise(ValueError, "end of string while looking for conversion specifier")
					}
					conv = rest[1]
					rest = rest[2:]
					if len(rest) > 0 && rest[0] != ':' {
						t.raise(ValueError, "expected ':' after conversion specifier")
					}
				}
				if len(rest) > 0 && rest[0] == ':' {
					spec = rest[1:]
				}
			}
			if strings.Contains(spec, "{") {
				if depth > 1 {
					t.raise(ValueError, "Max string recursion exceeded")
				}
				spec = render(spec, depth+1)
			}
			// resolve the field name
			base := name
			rest := ""
			if p := strings.IndexAny(name, ".["); p >= 0 {
				base, rest = name[:p], name[p:]
			}
			var v Value
			if base == "" {
				if manual {
					t.raise(ValueError, "cannot switch from manual field specification to automatic field numbering")
				}
				if auto >= len(args) {
					t.raise(IndexError, "Replacement index %d out of range for positional args tuple", auto)
				}
				v = args[auto]
				auto++
			} else if n, err := strconv.Atoi(base); err == nil {
				manual = true
				if auto > 0 {
					t.raise(ValueError, "cannot switch from automatic field numbering to manual field specification")
				}
				if n >= len(args) {
					t.raise(IndexError, "Replacement index %d out of range for positional args tuple", n)
				}
				v = args[n]
			} else {
				found := false
				for _, a := range kw {
					if a.Name == base {
						v, found = a.Value, true
					}
				}
				if !found {
					panic(&Exception{Class: KeyError, Args: []Value{base}, Line: t.line})
				}
			}
			for rest != "" {
				if rest[0] == '.' {
					e := strings.IndexAny(rest[1:], ".[")
					attr := rest[1:]
					if e >= 0 {
						attr, rest = rest[1:1+e], rest[1+e:]
					} else {
						rest = ""
					}
					v = getAttr(t, v, attr)
				} else {
					e := strings.IndexByte(rest, ']')
					if e < 0 {
						t.raise(ValueError, "Missing ']' in format string")
					}
					key := rest[1:e]
					rest = rest[e+1:]
					if n, err := strconv.Atoi(key); err == nil {
						v = getItem(t, v, int64(n))
					} else {
						v = getItem(t, v, key)
					}
				}
			}
			switch conv {
			case 0:
			case 'r':
				v = reprCharged(t, v)
			case 's':
				v = strCharged(t, v)
			case 'a':
				v = asciiRepr(reprCharged(t, v))
			default:
				t.raise(ValueError, "Unknown conversion specifier %c", conv)
			}
			out := formatValue(t, v, spec)
			t.Charge("str.format", uint64(len(out))*2, uint64(len(out))/kib)
			sb.WriteString(out)
		}
		return sb.String()
	}
	t.Charge("str.format", uint64(len(format))+strHeader, uint64(len(format))/kib+1)
	sb.WriteString(render(format, 0))
	return sb.String()
}
