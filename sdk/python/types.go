package python

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

var types []*Type

func mkType(name string, is func(Value) bool, call func(t *Thread, args []Value, kw []KV) Value) *Type {
	ty := &Type{Name: name, Is: is, Attrs: map[string]Value{}}
	ty.Call = func(t *Thread, args []Value, kw []KV) Value {
		b, s := uint64(64), uint64(1)
		for _, a := range args {
			b2, s2 := size(a)
			b, s = b+b2, s+s2
		}
		t.Charge(name+"()", b, s)
		return call(t, args, kw)
	}
	registerCost(name, true)
	types = append(types, ty)
	return ty
}

// parseIntStr is int(s, base) with Python's rules.
func parseIntStr(t *Thread, s string, base int64) Value {
	orig := s
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = s[1:]
	}
	if base == 0 || base == 16 || base == 8 || base == 2 {
		low := strings.ToLower(s)
		switch {
		case strings.HasPrefix(low, "0x") && (base == 0 || base == 16):
			s, base = s[2:], 16
		case strings.HasPrefix(low, "0o") && (base == 0 || base == 8):
			s, base = s[2:], 8
		case strings.HasPrefix(low, "0b") && (base == 0 || base == 2):
			s, base = s[2:], 2
		case base == 0:
			base = 10
		}
	}
	clean := s
	if strings.Contains(s, "_") {
		if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
			clean = "!"
		} else {
			clean = strings.ReplaceAll(s, "_", "")
		}
	}
	if base == 10 && len(clean) > maxStrDigits {
		t.raise(ValueError, "Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxStrDigits, len(clean))
	}
	b, ok := new(big.Int).SetString(clean, int(base))
	if !ok || clean == "" || strings.ContainsAny(clean, "+-") {
		t.raise(ValueError, "invalid literal for int() with base %d: %s", base, StrRepr(orig))
	}
	if neg {
		b.Neg(b)
	}
	return normBig(b)
}

func floatToInt(t *Thread, f float64) Value {
	if math.IsInf(f, 0) {
		t.raise(OverflowError, "cannot convert float infinity to integer")
	}
	if math.IsNaN(f) {
		t.raise(ValueError, "cannot convert float NaN to integer")
	}
	f = math.Trunc(f)
	if math.Abs(f) < 9e18 {
		return int64(f)
	}
	b, _ := new(big.Float).SetFloat64(f).Int(nil)
	return normBig(b)
}

func parseFloatStr(t *Thread, s string) float64 {
	c := strings.TrimSpace(s)
	low := strings.ToLower(c)
	switch strings.TrimLeft(low, "+-") {
	case "inf", "infinity":
		if strings.HasPrefix(low, "-") {
			return math.Inf(-1)
		}
		return math.Inf(1)
	case "nan":
		return math.NaN()
	}
	if strings.Contains(c, "_") {
		if strings.HasPrefix(c, "_") || strings.HasSuffix(c, "_") || strings.Contains(c, "__") {
			c = "!"
		}
		c = strings.ReplaceAll(c, "_", "")
	}
	if strings.ContainsAny(low, "xp") {
		c = "!"
	}
	f, err := strconv.ParseFloat(c, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f
		}
		t.raise(ValueError, "could not convert string to float: %s", StrRepr(s))
	}
	return f
}

var (
	typeInt, typeFloat, typeStr, typeBool, typeList, typeTuple, typeDict, typeSet, typeFrozenset, typeRange *Type
)

func init() {
	typeInt = mkType("int", func(v Value) bool { return isInt(v) }, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "int", args, kw, "x?", "base?")
		if a[0] == nil {
			return int64(0)
		}
		if a[1] != nil {
			s, ok := a[0].(string)
			if !ok {
				t.raise(TypeError, "int() can't convert non-string with explicit base")
			}
			base := toInt(t, a[1], "base")
			if base != 0 && (base < 2 || base > 36) {
				t.raise(ValueError, "int() base must be >= 2 and <= 36, or 0")
			}
			return parseIntStr(t, s, base)
		}
		switch x := a[0].(type) {
		case int64, *big.Int:
			return x
		case bool:
			return b2i(x)
		case float64:
			return floatToInt(t, x)
		case string:
			return parseIntStr(t, x, 10)
		}
		t.raise(TypeError, "int() argument must be a string, a bytes-like object or a real number, not '%s'", typeName(a[0]))
		return nil
	})
	typeFloat = mkType("float", func(v Value) bool { _, ok := v.(float64); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "float", kw)
		if len(args) == 0 {
			return 0.0
		}
		switch x := args[0].(type) {
		case string:
			return parseFloatStr(t, x)
		default:
			if f, ok := toFloat(x); ok {
				if b, isBig := x.(*big.Int); isBig && math.IsInf(f, 0) {
					_ = b
					t.raise(OverflowError, "int too large to convert to float")
				}
				return f
			}
		}
		t.raise(TypeError, "float() argument must be a string or a real number, not '%s'", typeName(args[0]))
		return nil
	})
	typeStr = mkType("str", func(v Value) bool { _, ok := v.(string); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "str", args, kw, "object?")
		if a[0] == nil {
			return ""
		}
		return strCharged(t, a[0])
	})
	typeBool = mkType("bool", func(v Value) bool { _, ok := v.(bool); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "bool", args, kw, "x?")
		if a[0] == nil {
			return false
		}
		return Truth(a[0])
	})
	typeList = mkType("list", func(v Value) bool { _, ok := v.(*List); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "list", kw)
		if len(args) == 0 {
			return &List{V: []Value{}}
		}
		return &List{V: append([]Value{}, toSlice(t, args[0])...)}
	})
	typeTuple = mkType("tuple", func(v Value) bool { _, ok := v.(Tuple); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "tuple", kw)
		if len(args) == 0 {
			return Tuple{}
		}
		if tu, ok := args[0].(Tuple); ok {
			return tu
		}
		return Tuple(append([]Value{}, toSlice(t, args[0])...))
	})
	typeDict = mkType("dict", func(v Value) bool { _, ok := v.(*Dict); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		d := NewDict()
		if len(args) > 1 {
			t.raise(TypeError, "dict expected at most 1 argument, got %d", len(args))
		}
		if len(args) == 1 {
			dictUpdate(t, d, args[0])
		}
		for _, k := range kw {
			d.Set(k.Name, k.Value)
		}
		return d
	})
	typeDict.Attrs["fromkeys"] = mkBuiltin("dict.fromkeys", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "fromkeys", args, kw, "iterable", "value?")
		var v Value = None
		if a[1] != nil {
			v = a[1]
		}
		d := NewDict()
		iterate(t, a[0], func(k Value) bool {
			t.Charge("dict.fromkeys", entryBytes, 1)
			if !d.Set(k, v) {
				t.raise(TypeError, "unhashable type: '%s'", unhashableName(k))
			}
			return true
		})
		return d
	})
	typeSet = mkType("set", func(v Value) bool { s, ok := v.(*Set); return ok && !s.Frozen }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "set", kw)
		s := NewSet()
		if len(args) > 0 {
			setUpdate(t, s, args[0])
		}
		return s
	})
	typeFrozenset = mkType("frozenset", func(v Value) bool { s, ok := v.(*Set); return ok && s.Frozen }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "frozenset", kw)
		s := NewSet()
		if len(args) > 0 {
			setUpdate(t, s, args[0])
		}
		s.Frozen = true
		return s
	})
	typeRange = mkType("range", func(v Value) bool { _, ok := v.(*Range); return ok }, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "range", kw)
		var start, stop, step int64 = 0, 0, 1
		switch len(args) {
		case 1:
			stop = toInt(t, args[0], "range() argument")
		case 2:
			start, stop = toInt(t, args[0], "range() argument"), toInt(t, args[1], "range() argument")
		case 3:
			start, stop, step = toInt(t, args[0], "range() argument"), toInt(t, args[1], "range() argument"), toInt(t, args[2], "range() argument")
			if step == 0 {
				t.raise(ValueError, "range() arg 3 must not be zero")
			}
		default:
			t.raise(TypeError, "range expected at most 3 arguments, got %d", len(args))
		}
		return &Range{start, stop, step}
	})
	for _, ty := range types {
		universe[ty.Name] = ty
	}
}

// maxStrDigits is CPython 3.11's default int_max_str_digits.
const maxStrDigits = 4300

var typeCache = map[string]*Type{}

// typeOf is type(v): the builtin type object for v's type.
func typeOf(v Value) Value {
	switch x := v.(type) {
	case *Exception:
		return x.Class
	case bool:
		return typeBool
	case int64, *big.Int:
		return typeInt
	case float64:
		return typeFloat
	case string:
		return typeStr
	case *List:
		return typeList
	case Tuple:
		return typeTuple
	case *Set:
		if x.Frozen {
			return typeFrozenset
		}
		return typeSet
	case *Range:
		return typeRange
	case *Dict:
		if x.Default == nil && !x.Counter && !x.Ordered {
			return typeDict
		}
	}
	name := typeName(v)
	if ty, ok := typeCache[name]; ok {
		return ty
	}
	return &Type{Name: name, Is: func(w Value) bool { return typeName(w) == name }, Call: func(t *Thread, args []Value, kw []KV) Value {
		t.raise(TypeError, "cannot create '%s' instances", name)
		return nil
	}}
}

func init() {
	for _, n := range []string{"NoneType", "function", "builtin_function_or_method", "type", "module", "generator", "Doc"} {
		n := n
		typeCache[n] = &Type{Name: n, Is: func(w Value) bool { return typeName(w) == n }, Call: func(t *Thread, args []Value, kw []KV) Value {
			t.raise(TypeError, "cannot create '%s' instances", n)
			return nil
		}}
	}
}

// dictUpdate adds a mapping or an iterable of pairs to d.
func dictUpdate(t *Thread, d *Dict, src Value) {
	if m, ok := src.(*Dict); ok {
		t.Charge("dict update", uint64(m.Len())*entryBytes, uint64(m.Len()))
		for _, kv := range m.Items() {
			d.Set(kv[0], kv[1])
		}
		return
	}
	i := 0
	iterate(t, src, func(x Value) bool {
		t.Charge("dict update", entryBytes, 1)
		pair := toSlice(t, x)
		if len(pair) != 2 {
			t.raise(ValueError, "dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))
		}
		if !d.Set(pair[0], pair[1]) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(pair[0]))
		}
		i++
		return true
	})
}

func setUpdate(t *Thread, s *Set, src Value) {
	switch o := src.(type) {
	case *Set:
		t.Charge("set update", uint64(o.used)*entryBytes, uint64(o.used))
		s.merge(o)
		return
	case *Dict:
		n := o.Len()
		if (s.fill+n)*5 >= s.mask*3 {
			s.resize((s.used + n) * 2)
		}
	}
	iterate(t, src, func(x Value) bool {
		t.Charge("set add", entryBytes, 1)
		if !s.Add(x) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(x))
		}
		return true
	})
}
