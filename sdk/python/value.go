package python

import (
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/rlsearch/rlsearch/sdk/python/pyfmt"
)

// Value is a Python value. The Go types are:
//
//	None        NoneType
//	bool        bool
//	int         int64, or *big.Int when it does not fit (never both for one number)
//	float       float64
//	str         string (UTF-8; len and indexing count code points)
//	list        *List
//	tuple       Tuple
//	dict        *Dict (insertion-ordered)
//	set         *Set (Frozen for frozenset; CPython's table order)
//	functions   *Function, *Builtin
//	exceptions  *ExcClass (classes), *Exception (instances)
//	types       *Type (int, str, list, ...: callable, usable in isinstance)
//	modules     *Module
//	iterators   *Iterator; range: *Range
//	host values Object (the SDK's Doc)
type Value any

// NoneType is the type of None.
type NoneType struct{}

// None is Python's None.
var None = NoneType{}

type List struct{ V []Value }

type Tuple []Value

// Object is a host value with attributes (the SDK's Doc).
type Object interface {
	TypeName() string
	Attr(name string) (Value, bool)
	AttrNames() []string
	Repr() string
	// Key returns a comparable Go value; equal objects have equal keys.
	Key() any
}

// Range is range(start, stop, step).
type Range struct{ Start, Stop, Step int64 }

func (r *Range) Len() int64 {
	if r.Step > 0 && r.Start < r.Stop {
		return (r.Stop - r.Start + r.Step - 1) / r.Step
	}
	if r.Step < 0 && r.Start > r.Stop {
		return (r.Start - r.Stop - r.Step - 1) / (-r.Step)
	}
	return 0
}

// Iterator is a lazy iterator (generator expressions, map, filter, zip,
// enumerate, reversed, iter(), itertools).
type Iterator struct {
	Name string
	Next func() (Value, bool)
}

// Module is an imported module.
type Module struct {
	Name  string
	Attrs map[string]Value
}

// Type is a builtin type used as a value: int, str, list, ...
type Type struct {
	Name string
	Call func(t *Thread, args []Value, kw []KV) Value
	// Is reports whether v is an instance.
	Is func(v Value) bool
	// Attrs: classmethods such as dict.fromkeys, str.join.
	Attrs map[string]Value
}

// KV is a keyword argument.
type KV struct {
	Name  string
	Value Value
}

// Builtin is a function written in Go.
type Builtin struct {
	Name string
	Fn   func(t *Thread, args []Value, kw []KV) Value
	Self Value // bound receiver for methods, nil otherwise
}

func typeName(v Value) string {
	switch v := v.(type) {
	case NoneType:
		return "NoneType"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case *List:
		return "list"
	case Tuple:
		return "tuple"
	case *Dict:
		if v.Default != nil {
			return "collections.defaultdict"
		}
		if v.Counter {
			return "Counter"
		}
		return "dict"
	case *Set:
		if v.Frozen {
			return "frozenset"
		}
		return "set"
	case *Function:
		return "function"
	case *Builtin:
		if v.Self != nil {
			return "builtin_function_or_method"
		}
		return "builtin_function_or_method"
	case *ExcClass, *Type:
		return "type"
	case *Exception:
		return v.Class.Name
	case *Module:
		return "module"
	case *Iterator:
		if v.Name != "" {
			return v.Name
		}
		return "iterator"
	case *Range:
		return "range"
	case *Deque:
		return "collections.deque"
	case *Pattern:
		return "re.Pattern"
	case *Match:
		return "re.Match"
	case Object:
		return v.TypeName()
	}
	return "object"
}

// Truth is Python's bool(v).
func Truth(v Value) bool {
	switch v := v.(type) {
	case NoneType:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case *big.Int:
		return v.Sign() != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case *List:
		return len(v.V) > 0
	case Tuple:
		return len(v) > 0
	case *Dict:
		return v.Len() > 0
	case *Set:
		return v.used > 0
	case *Range:
		return v.Len() > 0
	case *Deque:
		return len(v.V) > 0
	}
	return true
}

// FloatRepr is Python's repr of a float: the shortest string that round
// trips, in exponent form when the exponent is < -4 or ≥ 16.
func FloatRepr(f float64) string { return pyfmt.FloatRepr(f) }

// StrRepr is Python's repr of a str.
func StrRepr(s string) string { return pyfmt.StrRepr(s) }

// Repr is Python's repr(v).
func Repr(v Value) string {
	var sb strings.Builder
	writeRepr(&sb, v, 0)
	return sb.String()
}

// Str is Python's str(v).
func Str(v Value) string {
	switch v := v.(type) {
	case string:
		return v
	case *Exception:
		return v.StrMsg()
	}
	return Repr(v)
}

func writeRepr(sb *strings.Builder, v Value, depth int) {
	if depth > 200 {
		sb.WriteString("...")
		return
	}
	switch v := v.(type) {
	case NoneType:
		sb.WriteString("None")
	case bool:
		if v {
			sb.WriteString("True")
		} else {
			sb.WriteString("False")
		}
	case int64:
		sb.WriteString(strconv.FormatInt(v, 10))
	case *big.Int:
		sb.WriteString(v.String())
	case float64:
		sb.WriteString(FloatRepr(v))
	case string:
		sb.WriteString(StrRepr(v))
	case *List:
		sb.WriteByte('[')
		for i, x := range v.V {
			if i > 0 {
				sb.WriteString(", ")
			}
			if x == Value(v) {
				sb.WriteString("[...]")
				continue
			}
			writeRepr(sb, x, depth+1)
		}
		sb.WriteByte(']')
	case Tuple:
		sb.WriteByte('(')
		for i, x := range v {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, x, depth+1)
		}
		if len(v) == 1 {
			sb.WriteByte(',')
		}
		sb.WriteByte(')')
	case *Dict:
		switch {
		case v.Default != nil:
			sb.WriteString("defaultdict(")
			writeRepr(sb, v.Default, depth+1)
			sb.WriteString(", ")
		case v.Counter:
			sb.WriteString("Counter(")
			if v.Len() == 0 {
				sb.WriteString(")")
				return
			}
		case v.Ordered:
			sb.WriteString("OrderedDict(")
			if v.Len() == 0 {
				sb.WriteString(")")
				return
			}
			sb.WriteByte('[')
			for i, kv := range v.Items() {
				if i > 0 {
					sb.WriteString(", ")
				}
				writeRepr(sb, Tuple{kv[0], kv[1]}, depth+1)
			}
			sb.WriteString("])")
			return
		}
		sb.WriteByte('{')
		items := v.Items()
		if v.Counter {
			items = counterOrder(items)
		}
		for i, kv := range items {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, kv[0], depth+1)
			sb.WriteString(": ")
			if kv[1] == Value(v) {
				sb.WriteString("{...}")
				continue
			}
			writeRepr(sb, kv[1], depth+1)
		}
		sb.WriteByte('}')
		if v.Default != nil || v.Counter || v.Ordered {
			sb.WriteByte(')')
		}
	case *Set:
		keys := v.Keys()
		if len(keys) == 0 {
			if v.Frozen {
				sb.WriteString("frozenset()")
			} else {
				sb.WriteString("set()")
			}
			return
		}
		if v.Frozen {
			sb.WriteString("frozenset(")
		}
		sb.WriteByte('{')
		for i, x := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, x, depth+1)
		}
		sb.WriteByte('}')
		if v.Frozen {
			sb.WriteByte(')')
		}
	case *Function:
		sb.WriteString("<function " + v.Name + ">")
	case *Builtin:
		sb.WriteString("<built-in function " + v.Name + ">")
	case *ExcClass:
		sb.WriteString("<class '" + v.Name + "'>")
	case *Type:
		sb.WriteString("<class '" + v.Name + "'>")
	case *Exception:
		sb.WriteString(v.Repr())
	case *Module:
		sb.WriteString("<module '" + v.Name + "'>")
	case *Range:
		if v.Step == 1 {
			sb.WriteString("range(" + strconv.FormatInt(v.Start, 10) + ", " + strconv.FormatInt(v.Stop, 10) + ")")
		} else {
			sb.WriteString("range(" + strconv.FormatInt(v.Start, 10) + ", " + strconv.FormatInt(v.Stop, 10) + ", " + strconv.FormatInt(v.Step, 10) + ")")
		}
	case *Iterator:
		sb.WriteString("<" + typeName(v) + " object>")
	case *dictView:
		sb.WriteString("dict_" + v.kind + "(")
		writeRepr(sb, v.values(), depth+1)
		sb.WriteByte(')')
	case *Deque:
		sb.WriteString("deque([")
		for i, x := range v.V {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, x, depth+1)
		}
		sb.WriteString("]")
		if v.MaxLen >= 0 {
			sb.WriteString(", maxlen=" + strconv.Itoa(v.MaxLen))
		}
		sb.WriteString(")")
	case *Pattern:
		sb.WriteString("re.compile(" + StrRepr(v.Src) + ")")
	case *Match:
		sb.WriteString("<re.Match object; span=(" + strconv.Itoa(v.span(0)[0]) + ", " + strconv.Itoa(v.span(0)[1]) + "), match=" + StrRepr(v.group(0).(string)) + ">")
	case Object:
		sb.WriteString(v.Repr())
	default:
		sb.WriteString("<object>")
	}
}

// counterOrder is Counter's repr order: most common first, ties in
// insertion order.
func counterOrder(items [][2]Value) [][2]Value {
	out := append([][2]Value{}, items...)
	sort.SliceStable(out, func(i, j int) bool {
		c, _ := compareValues(out[j][1], out[i][1])
		return c < 0
	})
	return out
}

// numeric helpers

func isNumber(v Value) bool {
	switch v.(type) {
	case bool, int64, *big.Int, float64:
		return true
	}
	return false
}

// toFloat converts a number to float64.
func toFloat(v Value) (float64, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case int64:
		return float64(v), true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	case float64:
		return v, true
	}
	return 0, false
}

// toBig returns an integer (bool, int64, *big.Int) as *big.Int.
func toBig(v Value) (*big.Int, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case int64:
		return big.NewInt(v), true
	case *big.Int:
		return v, true
	}
	return nil, false
}

// normBig returns b as int64 when it fits.
func normBig(b *big.Int) Value {
	if b.IsInt64() {
		return b.Int64()
	}
	return b
}

func isInt(v Value) bool {
	switch v.(type) {
	case bool, int64, *big.Int:
		return true
	}
	return false
}

// Equal is Python's ==.
func Equal(a, b Value) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case bool:
			return x == b2i(y)
		case float64:
			return float64(x) == y && (y == math.Trunc(y))
		case *big.Int:
			return false
		}
		return false
	case NoneType:
		_, ok := b.(NoneType)
		return ok
	}
	if isNumber(a) && isNumber(b) {
		c, ok := compareNumbers(a, b)
		return ok && c == 0
	}
	switch x := a.(type) {
	case *List:
		y, ok := b.(*List)
		return ok && seqEqual(x.V, y.V)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && seqEqual(x, y)
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, kv := range x.Items() {
			v, found := y.Get(kv[0])
			if !found || !Equal(kv[1], v) {
				return false
			}
		}
		return true
	case *Set:
		y, ok := b.(*Set)
		if !ok || x.used != y.used {
			return false
		}
		for _, k := range x.Keys() {
			if !y.Has(k) {
				return false
			}
		}
		return true
	case *Deque:
		y, ok := b.(*Deque)
		return ok && seqEqual(x.V, y.V)
	case *Range:
		y, ok := b.(*Range)
		return ok && seqEqual(rangeValues(x), rangeValues(y))
	case Object:
		y, ok := b.(Object)
		return ok && x.Key() == y.Key()
	case *Exception:
		return a == b
	}
	return a == b
}

func rangeValues(r *Range) []Value {
	n := r.Len()
	if n > 1<<16 {
		n = 1 << 16
	}
	out := make([]Value, n)
	for i := range out {
		out[i] = r.Start + int64(i)*r.Step
	}
	return out
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func seqEqual(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != nil && b[i] != nil && !identical(a[i], b[i]) && !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// identical is Python's `is` for the values where identity is observable.
func identical(a, b Value) bool {
	switch x := a.(type) {
	case NoneType:
		_, ok := b.(NoneType)
		return ok
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y && x >= -5 && x <= 256
	case string:
		y, ok := b.(string)
		return ok && x == y
	case Tuple:
		y, ok := b.(Tuple)
		return ok && len(x) == 0 && len(y) == 0 || ok && len(x) > 0 && len(x) == len(y) && &x[0] == &y[0]
	case float64, *big.Int:
		return false
	case Object:
		y, ok := b.(Object)
		return ok && x.Key() == y.Key()
	}
	switch b.(type) {
	case NoneType, bool, int64, string, Tuple, float64, *big.Int:
		return false
	}
	return a == b
}

// compareNumbers orders two numbers.
func compareNumbers(a, b Value) (int, bool) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmp3(x < y, x > y), true
		}
	}
	fa, aIsF := a.(float64)
	fb, bIsF := b.(float64)
	if aIsF || bIsF {
		if !aIsF {
			if ba, ok := toBig(a); ok {
				if math.IsInf(fb, 0) || math.IsNaN(fb) {
					fa = 0
				} else {
					return -compareBigFloat(fb, ba), true
				}
			}
		}
		if !bIsF {
			if bb, ok := toBig(b); ok {
				if math.IsInf(fa, 0) || math.IsNaN(fa) {
					fb = 0
				} else {
					return compareBigFloat(fa, bb), true
				}
			}
		}
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return 2, true // unordered
		}
		return cmp3(fa < fb, fa > fb), true
	}
	ba, ok1 := toBig(a)
	bb, ok2 := toBig(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return ba.Cmp(bb), true
}

func compareBigFloat(f float64, b *big.Int) int {
	bf := new(big.Float).SetInt(b)
	return big.NewFloat(f).Cmp(bf)
}

func cmp3(lt, gt bool) int {
	if lt {
		return -1
	}
	if gt {
		return 1
	}
	return 0
}

// compareValues orders a and b for <, sorted, min, max. ok is false when
// the types are not ordered (TypeError).
func compareValues(a, b Value) (int, bool) {
	if isNumber(a) && isNumber(b) {
		return compareNumbers(a, b)
	}
	switch x := a.(type) {
	case *cmpKey:
		y, ok := b.(*cmpKey)
		if !ok {
			return 0, false
		}
		r := CallValue(x.t, x.fn, []Value{x.v, y.v}, nil)
		c, ok := compareNumbers(r, int64(0))
		if !ok {
			x.t.raise(TypeError, "the comparison function must return a number, not %s", typeName(r))
		}
		return c, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true // UTF-8 order = code point order
	case *List:
		y, ok := b.(*List)
		if !ok {
			return 0, false
		}
		return compareSeq(x.V, y.V)
	case Tuple:
		y, ok := b.(Tuple)
		if !ok {
			return 0, false
		}
		return compareSeq(x, y)
	case *Set:
		y, ok := b.(*Set)
		if !ok {
			return 0, false
		}
		// subset order: only < <= > >= are meaningful; report via sentinel
		sub := x.isSubset(y)
		sup := y.isSubset(x)
		switch {
		case sub && sup:
			return 0, true
		case sub:
			return -1, true
		case sup:
			return 1, true
		}
		return 2, true
	}
	return 0, false
}

func compareSeq(a, b []Value) (int, bool) {
	for i := 0; i < len(a) && i < len(b); i++ {
		if Equal(a[i], b[i]) {
			continue
		}
		return compareValues(a[i], b[i])
	}
	return cmp3(len(a) < len(b), len(a) > len(b)), true
}

// hashKey returns a comparable Go key with Python's equality: equal
// Python values have equal keys (1 == 1.0 == True).
func hashKey(v Value) (any, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int64:
		return v, true
	case bool:
		return b2i(v), true
	case NoneType:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 9.2e18 {
			return int64(v), true
		}
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			b, _ := new(big.Float).SetFloat64(v).Int(nil)
			return "\x00big:" + b.String(), true
		}
		return v, true
	case *big.Int:
		return "\x00big:" + v.String(), true
	case Tuple:
		var sb strings.Builder
		sb.WriteString("\x00tuple(")
		for _, x := range v {
			k, ok := hashKey(x)
			if !ok {
				return nil, false
			}
			writeKey(&sb, k)
		}
		sb.WriteByte(')')
		return sb.String(), true
	case *Set:
		if !v.Frozen {
			return nil, false
		}
		var ks []string
		for _, x := range v.Keys() {
			k, _ := hashKey(x)
			var sb strings.Builder
			writeKey(&sb, k)
			ks = append(ks, sb.String())
		}
		sort.Strings(ks)
		return "\x00frozenset(" + strings.Join(ks, "") + ")", true
	case Object:
		return v.Key(), true
	case *List, *Dict, *Deque:
		return nil, false
	}
	return v, true
}

func writeKey(sb *strings.Builder, k any) {
	switch k := k.(type) {
	case string:
		sb.WriteString("s" + strconv.Itoa(len(k)) + ":" + k)
	case int64:
		sb.WriteString("i" + strconv.FormatInt(k, 10) + ";")
	case float64:
		sb.WriteString("f" + strconv.FormatFloat(k, 'g', -1, 64) + ";")
	case NoneType:
		sb.WriteString("N;")
	default:
		sb.WriteString("p" + strconv.FormatUint(uint64(uintptrOf(k)), 16) + ";")
	}
}

// isPrintable is CPython's Py_UNICODE_ISPRINTABLE: not in categories Cc,
// Cf, Cs, Co, Cn, Zl, Zp, Zs (except the ASCII space).
func isPrintable(r rune) bool { return unicode.IsPrint(r) }

// unhashableName is the type CPython names in "unhashable type: '...'":
// the innermost unhashable element of a tuple.
func unhashableName(v Value) string {
	if t, ok := v.(Tuple); ok {
		for _, x := range t {
			if _, ok := hashKey(x); !ok {
				return unhashableName(x)
			}
		}
	}
	return typeName(v)
}

var posInf, negInf = 1.0 / zero(), -1.0 / zero()

func zero() float64 { return 0 }
