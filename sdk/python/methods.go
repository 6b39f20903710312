package python

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// method is a method of a builtin type with its cost rule.
type method struct {
	fn   func(t *Thread, recv Value, args []Value, kw []KV) Value
	cost costRule
}

// methodTables maps a type name to its methods (for TestCostRules too).
var methodTables = map[string]map[string]method{}

// dictView is dict.keys()/values()/items().
type dictView struct {
	d    *Dict
	kind string
}

func (v *dictView) values() *List {
	switch v.kind {
	case "keys":
		return &List{V: v.d.Keys()}
	case "values":
		return &List{V: v.d.Values()}
	}
	items := v.d.Items()
	out := make([]Value, len(items))
	for i, kv := range items {
		out[i] = Tuple{kv[0], kv[1]}
	}
	return &List{V: out}
}

func methodsOf(v Value) (string, map[string]method) {
	switch v := v.(type) {
	case string:
		return "str", methodTables["str"]
	case *List:
		return "list", methodTables["list"]
	case *Dict:
		if v.Counter {
			return "Counter", methodTables["Counter"]
		}
		if v.Ordered {
			return "OrderedDict", methodTables["OrderedDict"]
		}
		return "dict", methodTables["dict"]
	case *Set:
		if v.Frozen {
			return "frozenset", methodTables["frozenset"]
		}
		return "set", methodTables["set"]
	case Tuple:
		return "tuple", methodTables["tuple"]
	case *Deque:
		return "deque", methodTables["deque"]
	case *Pattern:
		return "Pattern", methodTables["Pattern"]
	case *Match:
		return "Match", methodTables["Match"]
	case int64, bool:
		return "int", methodTables["int"]
	case float64:
		return "float", methodTables["float"]
	case *dictView:
		return "dict_" + v.kind, methodTables["dict_view"]
	}
	return typeName(v), nil
}

// callMethod is recv.name(*args, **kw) without building a bound method.
func callMethod(t *Thread, recv Value, name string, args []Value, kw []KV) Value {
	tn, ms := methodsOf(recv)
	if m, ok := ms[name]; ok {
		t.step()
		m.cost(t, recv, args)
		return m.fn(t, recv, args, kw)
	}
	if tn == "Counter" || tn == "OrderedDict" {
		if m, ok := methodTables["dict"][name]; ok {
			t.step()
			m.cost(t, recv, args)
			return m.fn(t, recv, args, kw)
		}
	}
	return CallValue(t, getAttr(t, recv, name), args, kw)
}

func getAttr(t *Thread, v Value, name string) Value {
	if r := getAttrDefault(t, v, name, nil); r != nil {
		return r
	}
	if mod, ok := v.(*Module); ok {
		t.raise(AttributeError, "module '%s' has no attribute '%s' in this sandbox; it has: %s", mod.Name, name, strings.Join(sortedKeys(mod.Attrs), ", "))
	}
	if o, ok := v.(Object); ok {
		t.raise(AttributeError, "'%s' object has no attribute '%s'", o.TypeName(), name)
	}
	if e, ok := v.(*Exception); ok {
		_ = e
		t.raise(AttributeError, "'%s' object has no attribute '%s' (use str(e) or e.args)", typeName(v), name)
	}
	t.raise(AttributeError, "'%s' object has no attribute '%s'", typeName(v), name)
	return nil
}

func getAttrDefault(t *Thread, v Value, name string, def Value) Value {
	switch x := v.(type) {
	case *Module:
		if a, ok := x.Attrs[name]; ok {
			return a
		}
		return def
	case Object:
		if a, ok := x.Attr(name); ok {
			return a
		}
		return def
	case *Type:
		if a, ok := x.Attrs[name]; ok {
			return a
		}
		if name == "__name__" {
			return x.Name
		}
		// unbound methods: str.lower, list.append
		if ms := methodTables[x.Name]; ms != nil {
			if m, ok := ms[name]; ok {
				qual := x.Name + "." + name
				return &Builtin{Name: qual, Fn: func(t *Thread, args []Value, kw []KV) Value {
					if len(args) == 0 {
						t.raise(TypeError, "unbound method %s() needs an argument", qual)
					}
					m.cost(t, args[0], args[1:])
					return m.fn(t, args[0], args[1:], kw)
				}}
			}
		}
		return def
	case *Exception:
		if name == "args" {
			return Tuple(append([]Value{}, x.Args...))
		}
		return def
	case *ExcClass:
		if name == "__name__" {
			return x.Name
		}
		return def
	case int64, *bigIntT:
		switch name {
		case "real", "numerator":
			return v
		case "imag":
			return int64(0)
		case "denominator":
			return int64(1)
		}
	case float64:
		switch name {
		case "real":
			return v
		case "imag":
			return 0.0
		}
	}
	tn, ms := methodsOf(v)
	m, ok := ms[name]
	if !ok && (tn == "Counter" || tn == "OrderedDict") {
		m, ok = methodTables["dict"][name]
	}
	if !ok {
		if d, isD := v.(*Dict); isD && d.Default != nil && name == "default_factory" {
			return d.Default
		}
		if d, isD := v.(*Deque); isD && name == "maxlen" {
			if d.MaxLen < 0 {
				return None
			}
			return int64(d.MaxLen)
		}
		if p, isP := v.(*Pattern); isP && name == "pattern" {
			return p.Src
		}
		return def
	}
	return &Builtin{Name: name, Self: v, Fn: func(t *Thread, args []Value, kw []KV) Value {
		m.cost(t, v, args)
		return m.fn(t, v, args, kw)
	}}
}

type bigIntT = struct{}

func setAttr(t *Thread, o Value, name string, v Value) {
	t.raise(AttributeError, "'%s' object attribute '%s' is read-only (values in this sandbox have no settable attributes; use a dict)", typeName(o), name)
}

// reg adds a method to methodTables; the first registration of a name
// wins. Module makers call it, and they run once, at package
// initialisation (builtModules, modules.go), so programs only read the
// tables (concurrent imports rewrote them before: a data race found by
// -race on TestPythonDifferential).
func reg(table string, name string, cost costRule, fn func(t *Thread, recv Value, args []Value, kw []KV) Value) {
	if _, ok := methodTables[table][name]; ok {
		return
	}
	m := methodTables[table]
	if m == nil {
		m = map[string]method{}
		methodTables[table] = m
	}
	m[name] = method{fn, cost}
}

// string helpers

func optStr(t *Thread, v Value, what string) (string, bool) {
	if v == nil || v == None {
		return "", false
	}
	return asStr(t, v, what), true
}

// cpRange converts optional code-point start/end arguments to byte offsets.
func cpRange(t *Thread, s string, start, end Value) (int, int) {
	n := strLen(s)
	lo, hi, _ := sliceIndices(t, n, orNone(start), orNone(end), None)
	if hi < lo {
		return -1, -1
	}
	if isASCII(s) {
		return lo, hi
	}
	return runeOffset(s, lo), runeOffset(s, hi)
}

// cpRangeArgs is cpRange of the optional start and end at a[1] and a[2]
// (str.find(sub, start, end) and its kin).
func cpRangeArgs(t *Thread, s string, a []Value) (int, int) {
	var st, en Value
	if len(a) > 1 {
		st = a[1]
	}
	if len(a) > 2 {
		en = a[2]
	}
	return cpRange(t, s, st, en)
}

// countEqual is tuple.count, list.count and deque.count: how many of vs
// equal x.
func countEqual(vs []Value, x Value) Value {
	n := 0
	for _, v := range vs {
		if Equal(v, x) {
			n++
		}
	}
	return int64(n)
}

func orNone(v Value) Value {
	if v == nil {
		return None
	}
	return v
}

func cpIndex(s string, byteOff int) int64 {
	if byteOff < 0 {
		return -1
	}
	return int64(utf8.RuneCountInString(s[:byteOff]))
}

func isSpacePy(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r)
}

func splitWhitespace(s string, maxsplit int) []Value {
	var out []Value
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isSpacePy(r) {
			i += n
			continue
		}
		if maxsplit >= 0 && len(out) == maxsplit {
			out = append(out, strings.TrimRightFunc(s[i:], isSpacePy))
			return out
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if isSpacePy(r) {
				break
			}
			j += n
		}
		out = append(out, s[i:j])
		i = j
	}
	if out == nil {
		out = []Value{}
	}
	return out
}

func rsplitWhitespace(s string, maxsplit int) []Value {
	var rev []Value
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if isSpacePy(r) {
			i -= n
			continue
		}
		if maxsplit >= 0 && len(rev) == maxsplit {
			rev = append(rev, strings.TrimLeftFunc(s[:i], isSpacePy))
			break
		}
		j := i
		for j > 0 {
			r, n := utf8.DecodeLastRuneInString(s[:j])
			if isSpacePy(r) {
				break
			}
			j -= n
		}
		rev = append(rev, s[j:i])
		i = j
	}
	out := make([]Value, len(rev))
	for k, v := range rev {
		out[len(rev)-1-k] = v
	}
	return out
}

func strValues(ss []string) []Value {
	out := make([]Value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func stripChars(t *Thread, args []Value, kw []KV, name string) (string, bool) {
	a := argParse(t, name, args, kw, "chars?")
	return optStr(t, a[0], name+" arg")
}

func title(s string) string {
	var sb strings.Builder
	prev := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prev {
				sb.WriteRune(unicode.ToLower(r))
			} else {
				sb.WriteRune(unicode.ToTitle(r))
			}
			prev = true
		} else {
			sb.WriteRune(r)
			prev = false
		}
	}
	return sb.String()
}

// casedAs is str.isupper (is IsUpper, other IsLower) or str.islower: some
// cased character and none of the other case.
func casedAs(s string, is, other func(rune) bool) bool {
	cased := false
	for _, r := range s {
		if other(r) {
			return false
		}
		if is(r) {
			cased = true
		}
	}
	return cased
}

func allRunes(s string, f func(rune) bool) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !f(r) {
			return false
		}
	}
	return true
}

func affixMatch(t *Thread, s string, arg Value, start, end Value, f func(string, string) bool) bool {
	lo, hi := cpRange(t, s, start, end)
	if lo < 0 {
		return false
	}
	s = s[lo:hi]
	switch p := arg.(type) {
	case string:
		return f(s, p)
	case Tuple:
		for _, x := range p {
			xs, ok := x.(string)
			if !ok {
				t.raise(TypeError, "tuple for startswith must only contain str, not %s", typeName(x))
			}
			if f(s, xs) {
				return true
			}
		}
		return false
	}
	t.raise(TypeError, "startswith first arg must be str or a tuple of str, not %s", typeName(arg))
	return false
}

func costStrReplace(t *Thread, recv Value, args []Value) {
	s, _ := recv.(string)
	var old, nw string
	if len(args) >= 2 {
		old, _ = args[0].(string)
		nw, _ = args[1].(string)
	}
	n := uint64(len(s))
	var cnt uint64
	if old == "" {
		cnt = uint64(strLen(s)) + 1
	} else {
		cnt = uint64(strings.Count(s, old))
	}
	out := n + cnt*uint64(len(nw))
	t.Charge("string.replace()", out+strHeader, (n+out)/kib+1)
}

func costJoin(t *Thread, recv Value, args []Value) {
	sep, _ := recv.(string)
	if len(args) == 0 {
		return
	}
	var n, k uint64
	switch x := args[0].(type) {
	case *List:
		for _, v := range x.V {
			if s, ok := v.(string); ok {
				n += uint64(len(s))
			}
			k++
		}
	case Tuple:
		for _, v := range x {
			if s, ok := v.(string); ok {
				n += uint64(len(s))
			}
			k++
		}
	}
	out := n + k*uint64(len(sep))
	t.Charge("string.join()", out+strHeader, out/kib+k+1)
}

func costPad(t *Thread, recv Value, args []Value) {
	s, _ := recv.(string)
	w := uint64(0)
	if len(args) > 0 {
		if n, ok := args[0].(int64); ok && n > 0 {
			w = uint64(n)
		}
	}
	if w > 1<<24 {
		t.raise(ValueError, "width %d is too large for this sandbox", w)
	}
	t.Charge("str pad", uint64(len(s))+w*4, (uint64(len(s))+w)/kib+1)
}

func init() {
	S := func(v Value) string { return v.(string) }
	reg("str", "lower", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return strings.ToLower(strings.ReplaceAll(S(r), "\u0130", "i\u0307"))
	})
	reg("str", "upper", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return strings.ReplaceAll(strings.ToUpper(S(r)), "ß", "SS")
	})
	reg("str", "casefold", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return strings.ReplaceAll(strings.ToLower(S(r)), "ß", "ss")
	})
	reg("str", "title", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value { return title(S(r)) })
	reg("str", "capitalize", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		s := S(r)
		if s == "" {
			return s
		}
		c, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToTitle(c)) + strings.ToLower(s[n:])
	})
	reg("str", "swapcase", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return strings.Map(func(c rune) rune {
			if unicode.IsUpper(c) {
				return unicode.ToLower(c)
			}
			return unicode.ToUpper(c)
		}, S(r))
	})
	reg("str", "strip", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		if cs, ok := stripChars(t, a, kw, "strip"); ok {
			return strings.Trim(S(r), cs)
		}
		return strings.TrimFunc(S(r), isSpacePy)
	})
	reg("str", "lstrip", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		if cs, ok := stripChars(t, a, kw, "lstrip"); ok {
			return strings.TrimLeft(S(r), cs)
		}
		return strings.TrimLeftFunc(S(r), isSpacePy)
	})
	reg("str", "rstrip", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		if cs, ok := stripChars(t, a, kw, "rstrip"); ok {
			return strings.TrimRight(S(r), cs)
		}
		return strings.TrimRightFunc(S(r), isSpacePy)
	})
	reg("str", "removeprefix", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "removeprefix", a, kw, "prefix")
		return strings.TrimPrefix(S(r), asStr(t, x[0], "prefix"))
	})
	reg("str", "removesuffix", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "removesuffix", a, kw, "suffix")
		return strings.TrimSuffix(S(r), asStr(t, x[0], "suffix"))
	})
	split := func(t *Thread, r Value, a []Value, kw []KV, right bool) Value {
		x := argParse(t, "split", a, kw, "sep?", "maxsplit?")
		max := -1
		if x[1] != nil {
			max = int(toInt(t, x[1], "maxsplit"))
		}
		s := S(r)
		sep, ok := optStr(t, x[0], "sep")
		t.Charge("string.split()", uint64(len(s))*2+uint64(strings.Count(s, " ")+1)*strHeader*2, uint64(len(s))/kib+1)
		if !ok {
			if right {
				return &List{V: rsplitWhitespace(s, max)}
			}
			return &List{V: splitWhitespace(s, max)}
		}
		if sep == "" {
			t.raise(ValueError, "empty separator")
		}
		if right {
			if max < 0 {
				return &List{V: strValues(strings.Split(s, sep))}
			}
			var rev []string
			for len(rev) < max {
				i := strings.LastIndex(s, sep)
				if i < 0 {
					break
				}
				rev = append(rev, s[i+len(sep):])
				s = s[:i]
			}
			rev = append(rev, s)
			out := make([]Value, len(rev))
			for i, v := range rev {
				out[len(rev)-1-i] = v
			}
			return &List{V: out}
		}
		if max < 0 {
			return &List{V: strValues(strings.Split(s, sep))}
		}
		return &List{V: strValues(strings.SplitN(s, sep, max+1))}
	}
	reg("str", "split", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value { return split(t, r, a, kw, false) })
	reg("str", "rsplit", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value { return split(t, r, a, kw, true) })
	reg("str", "splitlines", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "splitlines", a, kw, "keepends?")
		keep := x[0] != nil && Truth(x[0])
		s := S(r)
		var out []Value
		start := 0
		for i := 0; i < len(s); {
			c, n := utf8.DecodeRuneInString(s[i:])
			brk := false
			end := i + n
			switch c {
			case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
				brk = true
			case '\r':
				brk = true
				if end < len(s) && s[end] == '\n' {
					end++
				}
			}
			if brk {
				if keep {
					out = append(out, s[start:end])
				} else {
					out = append(out, s[start:i])
				}
				start = end
				i = end
				continue
			}
			i += n
		}
		if start < len(s) {
			out = append(out, s[start:])
		}
		if out == nil {
			out = []Value{}
		}
		return &List{V: out}
	})
	reg("str", "join", costJoin, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "join", kw)
		if len(a) != 1 {
			t.raise(TypeError, "str.join() takes exactly one argument (%d given)", len(a))
		}
		vs := toSlice(t, a[0])
		parts := make([]string, len(vs))
		n := 0
		for i, v := range vs {
			s, ok := v.(string)
			if !ok {
				t.raise(TypeError, "sequence item %d: expected str instance, %s found", i, typeName(v))
			}
			parts[i] = s
			n += len(s)
		}
		if _, ok := a[0].(*List); !ok {
			if _, ok := a[0].(Tuple); !ok {
				t.Charge("str.join", uint64(n+len(vs)*len(S(r))), uint64(n)/kib)
			}
		}
		return strings.Join(parts, S(r))
	})
	reg("str", "replace", costStrReplace, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "replace", a, kw, "old", "new", "count?")
		n := -1
		if x[2] != nil {
			n = int(toInt(t, x[2], "count"))
		}
		return strings.Replace(S(r), asStr(t, x[0], "replace() argument 1"), asStr(t, x[1], "replace() argument 2"), n)
	})
	find := func(name string, last, strict bool) {
		reg("str", name, costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
			noKw(t, name, kw)
			if len(a) < 1 || len(a) > 3 {
				t.raise(TypeError, "%s() takes from 1 to 3 arguments", name)
			}
			s := S(r)
			sub := asStr(t, a[0], "must be str, not")
			lo, hi := cpRangeArgs(t, s, a)
			i := -1
			if lo >= 0 {
				if last {
					i = strings.LastIndex(s[lo:hi], sub)
				} else {
					i = strings.Index(s[lo:hi], sub)
				}
				if i >= 0 {
					i += lo
				}
			}
			if i < 0 {
				if strict {
					t.raise(ValueError, "substring not found")
				}
				return int64(-1)
			}
			return cpIndex(s, i)
		})
	}
	find("find", false, false)
	find("rfind", true, false)
	find("index", false, true)
	find("rindex", true, true)
	reg("str", "count", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "count", kw)
		if len(a) < 1 {
			t.raise(TypeError, "count() takes at least 1 argument (0 given)")
		}
		s := S(r)
		lo, hi := cpRangeArgs(t, s, a)
		if lo < 0 {
			return int64(0)
		}
		sub := asStr(t, a[0], "count() argument")
		if sub == "" {
			return int64(strLen(s[lo:hi]) + 1)
		}
		return int64(strings.Count(s[lo:hi], sub))
	})
	reg("str", "startswith", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "startswith", a, kw, "prefix", "start?", "end?")
		return affixMatch(t, S(r), x[0], x[1], x[2], strings.HasPrefix)
	})
	reg("str", "endswith", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "endswith", a, kw, "suffix", "start?", "end?")
		return affixMatch(t, S(r), x[0], x[1], x[2], strings.HasSuffix)
	})
	pred := func(name string, f func(string) bool) {
		reg("str", name, costScan, func(t *Thread, r Value, a []Value, kw []KV) Value { return f(S(r)) })
	}
	pred("isdigit", func(s string) bool { return allRunes(s, unicode.IsDigit) })
	pred("isdecimal", func(s string) bool { return allRunes(s, func(r rune) bool { return unicode.Is(unicode.Nd, r) }) })
	pred("isnumeric", func(s string) bool { return allRunes(s, func(r rune) bool { return unicode.IsNumber(r) }) })
	pred("isalpha", func(s string) bool { return allRunes(s, unicode.IsLetter) })
	pred("isalnum", func(s string) bool {
		return allRunes(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
	})
	pred("isspace", func(s string) bool { return allRunes(s, isSpacePy) })
	pred("isascii", func(s string) bool { return isASCII(s) })
	pred("isidentifier", func(s string) bool {
		for i, r := range s {
			if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
				return false
			}
		}
		return s != ""
	})
	pred("isupper", func(s string) bool { return casedAs(s, unicode.IsUpper, unicode.IsLower) })
	pred("islower", func(s string) bool { return casedAs(s, unicode.IsLower, unicode.IsUpper) })
	pred("istitle", func(s string) bool { return s != "" && title(s) == s && strings.ToLower(s) != s })
	reg("str", "zfill", costPad, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "zfill", a, kw, "width")
		w := int(toInt(t, x[0], "width"))
		s := S(r)
		n := strLen(s)
		if w <= n {
			return s
		}
		sign := ""
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			sign, s = s[:1], s[1:]
		}
		return sign + strings.Repeat("0", w-n) + s
	})
	padFn := func(name string, align byte) {
		reg("str", name, costPad, func(t *Thread, r Value, a []Value, kw []KV) Value {
			x := argParse(t, name, a, kw, "width", "fillchar?")
			fill := " "
			if x[1] != nil {
				fill = asStr(t, x[1], "fillchar")
				if strLen(fill) != 1 {
					t.raise(TypeError, "The fill character must be exactly one character long")
				}
			}
			s := S(r)
			w := int(toInt(t, x[0], "width"))
			n := strLen(s)
			if w <= n {
				return s
			}
			switch align {
			case '<':
				return s + strings.Repeat(fill, w-n)
			case '>':
				return strings.Repeat(fill, w-n) + s
			}
			// CPython's center: left = pad/2 + (pad & width & 1)
			p := w - n
			left := p/2 + (p & w & 1)
			return strings.Repeat(fill, left) + s + strings.Repeat(fill, p-left)
		})
	}
	padFn("ljust", '<')
	padFn("rjust", '>')
	padFn("center", '^')
	part := func(name string, last bool) {
		reg("str", name, costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
			x := argParse(t, name, a, kw, "sep")
			sep := asStr(t, x[0], "sep")
			if sep == "" {
				t.raise(ValueError, "empty separator")
			}
			s := S(r)
			var i int
			if last {
				i = strings.LastIndex(s, sep)
				if i < 0 {
					return Tuple{"", "", s}
				}
			} else {
				i = strings.Index(s, sep)
				if i < 0 {
					return Tuple{s, "", ""}
				}
			}
			return Tuple{s[:i], sep, s[i+len(sep):]}
		})
	}
	part("partition", false)
	part("rpartition", true)
	reg("str", "format", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value { return strFormat(t, S(r), a, kw) })
	reg("str", "format_map", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "format_map", a, kw, "mapping")
		d, ok := x[0].(*Dict)
		if !ok {
			t.raise(TypeError, "format_map() argument must be a dict")
		}
		var kws []KV
		for _, kv := range d.Items() {
			if k, ok := kv[0].(string); ok {
				kws = append(kws, KV{k, kv[1]})
			}
		}
		return strFormat(t, S(r), nil, kws)
	})
	reg("str", "expandtabs", costPad, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "expandtabs", a, kw, "tabsize?")
		ts := 8
		if x[0] != nil {
			ts = int(toInt(t, x[0], "tabsize"))
		}
		var sb strings.Builder
		col := 0
		for _, c := range S(r) {
			switch c {
			case '\t':
				if ts > 0 {
					n := ts - col%ts
					sb.WriteString(strings.Repeat(" ", n))
					col += n
				}
			case '\n', '\r':
				sb.WriteRune(c)
				col = 0
			default:
				sb.WriteRune(c)
				col++
			}
		}
		return sb.String()
	})
	reg("str", "encode", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		t.raise(TypeError, "str.encode() is not available: this sandbox has no bytes type; work with str")
		return nil
	})

	listMethods()
	dictMethods()
	setMethods()
	reg("tuple", "count", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "count", a, kw, "value")
		return countEqual(r.(Tuple), x[0])
	})
	reg("tuple", "index", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "index", a, kw, "value")
		for i, v := range r.(Tuple) {
			if Equal(v, x[0]) {
				return int64(i)
			}
		}
		t.raise(ValueError, "tuple.index(x): x not in tuple")
		return nil
	})
	reg("int", "bit_length", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		b, _ := toBig(r)
		return int64(b.BitLen())
	})
	reg("float", "is_integer", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		f := r.(float64)
		return f == float64(int64(f))
	})
	reg("dict_view", "isdisjoint", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return true
	})
}

func listMethods() {
	L := func(v Value) *List { return v.(*List) }
	reg("list", "append", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "append", kw)
		if len(a) != 1 {
			t.raise(TypeError, "list.append() takes exactly one argument (%d given)", len(a))
		}
		t.Charge("list.append", slotBytes, 0)
		l := L(r)
		l.V = append(l.V, a[0])
		return None
	})
	reg("list", "extend", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "extend", a, kw, "iterable")
		l := L(r)
		l.V = append(l.V, toSlice(t, x[0])...)
		return None
	})
	reg("list", "insert", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "insert", a, kw, "index", "object")
		l := L(r)
		i := int(toInt(t, x[0], "index"))
		if i < 0 {
			i += len(l.V)
			if i < 0 {
				i = 0
			}
		}
		if i > len(l.V) {
			i = len(l.V)
		}
		t.Charge("list.insert", slotBytes, 0)
		l.V = append(l.V, nil)
		copy(l.V[i+1:], l.V[i:])
		l.V[i] = x[1]
		return None
	})
	reg("list", "pop", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "pop", a, kw, "index?")
		l := L(r)
		if len(l.V) == 0 {
			t.raise(IndexError, "pop from empty list")
		}
		i := len(l.V) - 1
		if x[0] != nil {
			i = int(toInt(t, x[0], "index"))
			if i < 0 {
				i += len(l.V)
			}
			if i < 0 || i >= len(l.V) {
				t.raise(IndexError, "pop index out of range")
			}
		}
		v := l.V[i]
		l.V = append(l.V[:i], l.V[i+1:]...)
		return v
	})
	reg("list", "remove", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "remove", a, kw, "value")
		l := L(r)
		for i, v := range l.V {
			if Equal(v, x[0]) {
				l.V = append(l.V[:i], l.V[i+1:]...)
				return None
			}
		}
		t.raise(ValueError, "list.remove(x): x not in list")
		return nil
	})
	reg("list", "index", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "index", kw)
		if len(a) < 1 {
			t.raise(TypeError, "index expected at least 1 argument, got 0")
		}
		l := L(r)
		var st, en Value = None, None
		if len(a) > 1 {
			st = a[1]
		}
		if len(a) > 2 {
			en = a[2]
		}
		lo, hi, _ := sliceIndices(t, len(l.V), st, en, None)
		for i := lo; i < hi; i++ {
			if Equal(l.V[i], a[0]) {
				return int64(i)
			}
		}
		t.raise(ValueError, "%s is not in list", Repr(a[0]))
		return nil
	})
	reg("list", "count", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "count", a, kw, "value")
		return countEqual(L(r).V, x[0])
	})
	reg("list", "sort", costSort, func(t *Thread, r Value, a []Value, kw []KV) Value {
		if len(a) > 0 {
			t.raise(TypeError, "sort() takes no positional arguments")
		}
		listSort(t, L(r), kw)
		return None
	})
	reg("list", "reverse", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		v := L(r).V
		for i, j := 0, len(v)-1; i < j; i, j = i+1, j-1 {
			v[i], v[j] = v[j], v[i]
		}
		return None
	})
	reg("list", "copy", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		return &List{V: append([]Value{}, L(r).V...)}
	})
	reg("list", "clear", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		L(r).V = []Value{}
		return None
	})
}

func dictMethods() {
	D := func(v Value) *Dict { return v.(*Dict) }
	reg("dict", "get", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "get", kw)
		if len(a) < 1 || len(a) > 2 {
			t.raise(TypeError, "get expected 1 or 2 arguments, got %d", len(a))
		}
		if _, ok := hashKey(a[0]); !ok {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(a[0]))
		}
		if v, ok := D(r).Get(a[0]); ok {
			return v
		}
		if len(a) == 2 {
			return a[1]
		}
		return None
	})
	reg("dict", "setdefault", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "setdefault", kw)
		if len(a) < 1 || len(a) > 2 {
			t.raise(TypeError, "setdefault expected 1 or 2 arguments, got %d", len(a))
		}
		d := D(r)
		if v, ok := d.Get(a[0]); ok {
			return v
		}
		var v Value = None
		if len(a) == 2 {
			v = a[1]
		}
		t.Charge("dict entry", entryBytes, 0)
		if !d.Set(a[0], v) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(a[0]))
		}
		return v
	})
	reg("dict", "update", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		d := D(r)
		if len(a) > 1 {
			t.raise(TypeError, "update expected at most 1 argument, got %d", len(a))
		}
		if len(a) == 1 {
			if d.Counter {
				counterUpdate(t, d, a[0], 1)
			} else {
				dictUpdate(t, d, a[0])
			}
		}
		for _, k := range kw {
			d.Set(k.Name, k.Value)
		}
		return None
	})
	reg("dict", "pop", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		noKw(t, "pop", kw)
		if len(a) < 1 || len(a) > 2 {
			t.raise(TypeError, "pop expected at least 1 argument, got %d", len(a))
		}
		if v, ok := D(r).Delete(a[0]); ok {
			return v
		}
		if len(a) == 2 {
			return a[1]
		}
		panic(&Exception{Class: KeyError, Args: []Value{a[0]}, Line: t.line})
	})
	reg("dict", "popitem", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		d := D(r)
		keys := d.Keys()
		if len(keys) == 0 {
			t.raise(KeyError, "popitem(): dictionary is empty")
		}
		k := keys[len(keys)-1]
		if d.Ordered && len(a) > 0 && !Truth(a[0]) {
			k = keys[0]
		}
		v, _ := d.Delete(k)
		return Tuple{k, v}
	})
	reg("dict", "keys", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		t.Charge("dict.keys", uint64(D(r).Len())*16, uint64(D(r).Len()))
		return &dictView{D(r), "keys"}
	})
	reg("dict", "values", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		t.Charge("dict.values", uint64(D(r).Len())*16, uint64(D(r).Len()))
		return &dictView{D(r), "values"}
	})
	reg("dict", "items", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		t.Charge("dict.items", uint64(D(r).Len())*slotBytes, uint64(D(r).Len()))
		return &dictView{D(r), "items"}
	})
	reg("dict", "copy", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value { return D(r).Copy() })
	reg("dict", "clear", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value { D(r).Clear(); return None })
	reg("Counter", "most_common", costSort, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "most_common", a, kw, "n?")
		items := counterOrder(D(r).Items())
		if x[0] != nil && x[0] != None {
			n := int(toInt(t, x[0], "n"))
			if n < 0 {
				n = 0
			}
			if n < len(items) {
				items = items[:n]
			}
		}
		out := make([]Value, len(items))
		for i, kv := range items {
			out[i] = Tuple{kv[0], kv[1]}
		}
		return &List{V: out}
	})
	reg("Counter", "total", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		var s Value = int64(0)
		for _, v := range D(r).Values() {
			s = binary(t, "+", s, v)
		}
		return s
	})
	reg("Counter", "elements", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		var out []Value
		for _, kv := range D(r).Items() {
			n, _ := kv[1].(int64)
			if n > 1<<20 {
				t.Charge("Counter.elements", uint64(n)*slotBytes, uint64(n))
			}
			for i := int64(0); i < n; i++ {
				out = append(out, kv[0])
			}
		}
		return sliceIter("itertools.chain", out)
	})
	reg("Counter", "subtract", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		if len(a) == 1 {
			counterUpdate(t, D(r), a[0], -1)
		}
		return None
	})
	reg("OrderedDict", "move_to_end", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "move_to_end", a, kw, "key", "last?")
		last := x[1] == nil || Truth(x[1])
		if !D(r).MoveToEnd(x[0], last) {
			panic(&Exception{Class: KeyError, Args: []Value{x[0]}, Line: t.line})
		}
		return None
	})
	reg("dict_view", "__len__", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value { return int64(r.(*dictView).d.Len()) })
}

func counterUpdate(t *Thread, d *Dict, src Value, sign int64) {
	if m, ok := src.(*Dict); ok {
		for _, kv := range m.Items() {
			old, _ := d.Get(kv[0])
			if old == nil {
				old = int64(0)
			}
			v := kv[1]
			if sign < 0 {
				v = unary(t, "-", v)
			}
			d.Set(kv[0], binary(t, "+", old, v))
		}
		return
	}
	iterate(t, src, func(x Value) bool {
		t.Charge("Counter", entryBytes/4, 1)
		old, _ := d.Get(x)
		if old == nil {
			old = int64(0)
		}
		if !d.Set(x, binary(t, "+", old, sign)) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(x))
		}
		return true
	})
}

func counterOp(t *Thread, op string, a, b *Dict) Value {
	out := NewDict()
	out.Counter = true
	if op == "&" || op == "|" {
		for _, kv := range a.Items() {
			w, ok := b.Get(kv[0])
			v := kv[1]
			if ok {
				c, _ := compareValues(v, w)
				if op == "&" && c > 0 || op == "|" && c < 0 {
					v = w
				}
			} else if op == "&" {
				continue
			}
			if c, _ := compareValues(v, int64(0)); c > 0 {
				out.Set(kv[0], v)
			}
		}
		if op == "|" {
			setPositiveOnlyInB(out, a, b)
		}
		return out
	}
	for _, kv := range a.Items() {
		v := kv[1]
		if w, ok := b.Get(kv[0]); ok {
			v = binary(t, op, v, w)
		}
		if c, _ := compareValues(v, int64(0)); c > 0 {
			out.Set(kv[0], v)
		}
	}
	if op == "+" {
		setPositiveOnlyInB(out, a, b)
	}
	return out
}

// setPositiveOnlyInB sets in out the positive counts of the keys of b that
// a lacks (the tail of Counter's |, and +).
func setPositiveOnlyInB(out, a, b *Dict) {
	for _, kv := range b.Items() {
		if _, ok := a.Get(kv[0]); !ok {
			if c, _ := compareValues(kv[1], int64(0)); c > 0 {
				out.Set(kv[0], kv[1])
			}
		}
	}
}

func setMethods() {
	St := func(v Value) *Set { return v.(*Set) }
	toSet := func(t *Thread, v Value) *Set {
		if s, ok := v.(*Set); ok {
			return s
		}
		s := NewSet()
		setUpdate(t, s, v)
		return s
	}
	for _, table := range []string{"set", "frozenset"} {
		frozen := table == "frozenset"
		ops := map[string]string{"union": "|", "intersection": "&", "difference": "-", "symmetric_difference": "^"}
		for name, op := range ops {
			op := op
			reg(table, name, costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
				res := St(r).Copy()
				res.Frozen = frozen
				if len(a) == 0 {
					return res
				}
				for _, o := range a {
					res = setOp(t, op, res, toSet(t, o)).(*Set)
				}
				res.Frozen = frozen
				return res
			})
		}
		reg(table, "issubset", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
			x := argParse(t, "issubset", a, kw, "other")
			return St(r).isSubset(toSet(t, x[0]))
		})
		reg(table, "issuperset", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
			x := argParse(t, "issuperset", a, kw, "other")
			return toSet(t, x[0]).isSubset(St(r))
		})
		reg(table, "isdisjoint", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
			x := argParse(t, "isdisjoint", a, kw, "other")
			o := toSet(t, x[0])
			for _, k := range St(r).Keys() {
				if o.Has(k) {
					return false
				}
			}
			return true
		})
		reg(table, "copy", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value { return St(r).Copy() })
	}
	reg("set", "add", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "add", a, kw, "elem")
		t.Charge("set.add", entryBytes, 0)
		if !St(r).Add(x[0]) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(x[0]))
		}
		return None
	})
	reg("set", "update", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		for _, o := range a {
			setUpdate(t, St(r), o)
		}
		return None
	})
	reg("set", "discard", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "discard", a, kw, "elem")
		St(r).Discard(x[0])
		return None
	})
	reg("set", "remove", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "remove", a, kw, "elem")
		if !St(r).Discard(x[0]) {
			panic(&Exception{Class: KeyError, Args: []Value{x[0]}, Line: t.line})
		}
		return None
	})
	reg("set", "pop", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		v, ok := St(r).Pop(&t.popFinger)
		if !ok {
			t.raise(KeyError, "pop from an empty set")
		}
		return v
	})
	reg("set", "clear", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		*St(r) = *NewSet()
		return None
	})
	for name, op := range map[string]string{"intersection_update": "&", "difference_update": "-", "symmetric_difference_update": "^"} {
		op := op
		reg("set", name, costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
			s := St(r)
			for _, o := range a {
				res := setOp(t, op, s, toSet(t, o)).(*Set)
				*s = *res
			}
			s.Frozen = false
			return None
		})
	}
}
