package python

import (
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/sdk/python/pyfmt"
)

// Cost rules. Every builtin function, method and module function has one;
// it runs before the operation and charges the thread (Thread.Charge).
// TestCostRules enumerates everything the runtime exposes and fails on a
// missing rule.

// costRule charges for a call with receiver recv (nil for functions).
type costRule func(t *Thread, recv Value, args []Value)

// size returns (bytes, steps) proportional to v: a string's bytes (steps
// per KiB), a container's elements (slotBytes and a step each).
func size(v Value) (uint64, uint64) {
	switch x := v.(type) {
	case string:
		return uint64(len(x)), uint64(len(x)) / kib
	case *List:
		return uint64(len(x.V)) * slotBytes, uint64(len(x.V))
	case Tuple:
		return uint64(len(x)) * slotBytes, uint64(len(x))
	case *Dict:
		return uint64(x.Len()) * entryBytes, uint64(x.Len())
	case *Set:
		return uint64(x.used) * entryBytes, uint64(x.used)
	case *Deque:
		return uint64(len(x.V)) * slotBytes, uint64(len(x.V))
	case *Range:
		n := uint64(max(x.Len(), 0))
		if n > 1<<50 {
			return 1 << 60, n
		}
		return n * slotBytes, n
	case *big.Int:
		b := uint64(x.BitLen())
		return b / 8, b * b / (64 * 64 * 64)
	}
	return 0, 0
}

// cost1: constant work.
func cost1(t *Thread, recv Value, args []Value) { t.Charge("call", 0, 1) }

// costScan: reads its receiver and arguments, allocates little.
func costScan(t *Thread, recv Value, args []Value) {
	_, s := size(recv)
	for _, a := range args {
		_, s2 := size(a)
		s += s2
	}
	t.Charge("scan", 0, s+1)
}

// costCopy: allocates about the size of its receiver and arguments.
func costCopy(t *Thread, recv Value, args []Value) {
	b, s := size(recv)
	for _, a := range args {
		b2, s2 := size(a)
		b, s = b+b2, s+s2
	}
	t.Charge("copy", b+64, s+1)
}

// costSort: n log n comparisons plus a copy.
func costSort(t *Thread, recv Value, args []Value) {
	var n uint64
	if recv != nil {
		_, n = size(recv)
	} else if len(args) > 0 {
		_, n = size(args[0])
	}
	lg := uint64(1)
	for x := n; x > 1; x >>= 1 {
		lg++
	}
	t.Charge("sort", n*slotBytes+64, n*lg+1)
}

// costRender: str/repr-like output of the arguments.
func costRender(t *Thread, recv Value, args []Value) {
	var n uint64
	for _, a := range args {
		n += sizeEstimate(t, a)
	}
	t.Charge("render", n, n/kib+1)
}

// costPrint: print's rendering, refused past Thread.MaxPrintBytes before
// anything is rendered.
func costPrint(t *Thread, recv Value, args []Value) {
	var n uint64
	for _, a := range args {
		n += sizeEstimate(t, a)
	}
	if t.MaxPrintBytes > 0 && n > 4*t.MaxPrintBytes {
		// sizeEstimate counts 4 bytes per string byte (escapes): compare the
		// plain size too before refusing
		var plain uint64
		for _, a := range args {
			if s, ok := a.(string); ok {
				plain += uint64(len(s))
			} else {
				plain += sizeEstimate(t, a) / 4
			}
		}
		if plain > t.MaxPrintBytes {
			t.Stop(t.budgetErr("observation", "print", plain, 0, t.MaxPrintBytes))
		}
	}
	t.Charge("print", n, n/kib+1)
}

type builtinDef struct {
	fn   func(t *Thread, args []Value, kw []KV) Value
	cost costRule
}

func mkBuiltin(name string, cost costRule, fn func(t *Thread, args []Value, kw []KV) Value) *Builtin {
	b := &Builtin{Name: name}
	b.Fn = func(t *Thread, args []Value, kw []KV) Value {
		cost(t, nil, args)
		return fn(t, args, kw)
	}
	registerCost(name, cost != nil)
	return b
}

// costRegistry records, for every exposed callable, whether it has a rule.
// Module makers write it at package initialisation only (see
// builtModules); the lock keeps a later caller (a test) safe too.
var (
	costMu       sync.Mutex
	costRegistry = map[string]bool{}
)

func registerCost(name string, has bool) {
	costMu.Lock()
	costRegistry[name] = has
	costMu.Unlock()
}

// hasCostRule reports whether the callable name was registered with a rule.
func hasCostRule(name string) bool {
	costMu.Lock()
	defer costMu.Unlock()
	return costRegistry[name]
}

// argParse binds args and kw to names (a trailing "?" marks optional);
// missing optionals are nil.
func argParse(t *Thread, fname string, args []Value, kw []KV, names ...string) []Value {
	out := make([]Value, len(names))
	if len(args) > len(names) {
		t.raise(TypeError, "%s() takes at most %d arguments (%d given)", fname, len(names), len(args))
	}
	copy(out, args)
	for _, a := range kw {
		found := false
		for i, n := range names {
			if strings.TrimSuffix(n, "?") == a.Name {
				if out[i] != nil {
					t.raise(TypeError, "%s() got multiple values for argument '%s'", fname, a.Name)
				}
				out[i] = a.Value
				found = true
			}
		}
		if !found {
			t.raise(TypeError, "%s() got an unexpected keyword argument '%s'", fname, a.Name)
		}
	}
	for i, n := range names {
		if out[i] == nil && !strings.HasSuffix(n, "?") {
			t.raise(TypeError, "%s() missing required argument '%s' (pos %d)", fname, n, i+1)
		}
	}
	return out
}

func noKw(t *Thread, fname string, kw []KV) {
	if len(kw) > 0 {
		t.raise(TypeError, "%s() takes no keyword arguments", fname)
	}
}

func toInt(t *Thread, v Value, what string) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case bool:
		return b2i(x)
	case *big.Int:
		t.raise(OverflowError, "Python int too large to convert to C ssize_t")
	}
	t.raise(TypeError, "%s must be an integer, not %s", what, typeName(v))
	return 0
}

var universe = map[string]Value{}

func init() {
	for _, c := range excClasses {
		universe[c.Name] = c
	}
	universe["None"] = None
	reg := func(name string, cost costRule, fn func(t *Thread, args []Value, kw []KV) Value) {
		universe[name] = mkBuiltin(name, cost, fn)
	}
	reg("len", cost1, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "len", kw)
		if len(args) != 1 {
			t.raise(TypeError, "len() takes exactly one argument (%d given)", len(args))
		}
		switch x := args[0].(type) {
		case string:
			if isASCII(x) {
				return int64(len(x))
			}
			t.Charge("len", 0, uint64(len(x))/kib)
			return int64(strLen(x))
		case *List:
			return int64(len(x.V))
		case Tuple:
			return int64(len(x))
		case *Dict:
			return int64(x.Len())
		case *Set:
			return int64(x.used)
		case *Range:
			return x.Len()
		case *Deque:
			return int64(len(x.V))
		case *dictView:
			return int64(x.d.Len())
		}
		t.raise(TypeError, "object of type '%s' has no len()", typeName(args[0]))
		return nil
	})
	reg("print", costPrint, builtinPrint)
	reg("repr", costRender, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "repr", args, kw, "obj")
		return Repr(a[0])
	})
	reg("ascii", costRender, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "ascii", args, kw, "obj")
		return asciiRepr(Repr(a[0]))
	})
	reg("format", costRender, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "format", args, kw, "value", "format_spec?")
		spec := ""
		if a[1] != nil {
			spec = asStr(t, a[1], "format_spec")
		}
		return formatValue(t, a[0], spec)
	})
	reg("abs", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "abs", args, kw, "x")
		switch x := a[0].(type) {
		case int64:
			if x < 0 {
				return unary(t, "-", x)
			}
			return x
		case bool:
			return b2i(x)
		case *big.Int:
			return normBig(new(big.Int).Abs(x))
		case float64:
			return math.Abs(x)
		}
		t.raise(TypeError, "bad operand type for abs(): '%s'", typeName(a[0]))
		return nil
	})
	reg("round", cost1, builtinRound)
	reg("divmod", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "divmod", args, kw, "x", "y")
		return Tuple{binary(t, "//", a[0], a[1]), binary(t, "%", a[0], a[1])}
	})
	reg("pow", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "pow", args, kw, "base", "exp", "mod?")
		if a[2] != nil && a[2] != None {
			b, ok1 := toBig(a[0])
			e, ok2 := toBig(a[1])
			m, ok3 := toBig(a[2])
			if !ok1 || !ok2 || !ok3 {
				t.raise(TypeError, "pow() 3rd argument not allowed unless all arguments are integers")
			}
			if m.Sign() == 0 {
				t.raise(ValueError, "pow() 3rd argument cannot be 0")
			}
			if e.Sign() < 0 {
				t.raise(ValueError, "negative exponent with a modulus is not supported in this sandbox")
			}
			r := new(big.Int).Exp(b, e, new(big.Int).Abs(m))
			if m.Sign() < 0 && r.Sign() != 0 {
				r.Add(r, m)
			}
			return normBig(r)
		}
		return binary(t, "**", a[0], a[1])
	})
	reg("chr", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "chr", args, kw, "i")
		n := toInt(t, a[0], "chr() argument")
		if n < 0 || n > 0x10ffff {
			t.raise(ValueError, "chr() arg not in range(0x110000)")
		}
		if n >= 0xd800 && n < 0xe000 {
			t.raise(ValueError, "chr() of a surrogate (%d) is not supported in this sandbox", n)
		}
		return string(rune(n))
	})
	reg("ord", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "ord", args, kw, "c")
		s, ok := a[0].(string)
		if !ok {
			t.raise(TypeError, "ord() expected string of length 1, but %s found", typeName(a[0]))
		}
		if utf8.RuneCountInString(s) != 1 {
			t.raise(TypeError, "ord() expected a character, but string of length %d found", strLen(s))
		}
		r, _ := utf8.DecodeRuneInString(s)
		return int64(r)
	})
	reg("sum", costScan, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "sum", args, kw, "iterable", "start?")
		var acc Value = int64(0)
		if a[1] != nil {
			acc = a[1]
		}
		if _, ok := acc.(string); ok {
			t.raise(TypeError, "sum() can't sum strings [use ''.join(seq) instead]")
		}
		iterate(t, a[0], func(x Value) bool {
			t.step()
			acc = binary(t, "+", acc, x)
			return true
		})
		return acc
	})
	reg("min", costScan, func(t *Thread, args []Value, kw []KV) Value { return minMax(t, "min", args, kw, -1) })
	reg("max", costScan, func(t *Thread, args []Value, kw []KV) Value { return minMax(t, "max", args, kw, 1) })
	reg("any", costScan, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "any", args, kw, "iterable")
		r := false
		iterate(t, a[0], func(x Value) bool {
			t.step()
			if Truth(x) {
				r = true
				return false
			}
			return true
		})
		return r
	})
	reg("all", costScan, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "all", args, kw, "iterable")
		r := true
		iterate(t, a[0], func(x Value) bool {
			t.step()
			if !Truth(x) {
				r = false
				return false
			}
			return true
		})
		return r
	})
	reg("sorted", costSort, func(t *Thread, args []Value, kw []KV) Value {
		if len(args) != 1 {
			t.raise(TypeError, "sorted expected 1 argument, got %d", len(args))
		}
		vs := append([]Value{}, toSlice(t, args[0])...)
		costSort(t, &List{V: vs}, nil)
		l := &List{V: vs}
		listSort(t, l, kw)
		return l
	})
	reg("reversed", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "reversed", args, kw, "seq")
		switch a[0].(type) {
		case *Set, *Iterator:
			t.raise(TypeError, "'%s' object is not reversible", typeName(a[0]))
		}
		vs := toSlice(t, a[0])
		out := make([]Value, len(vs))
		for i, v := range vs {
			out[len(vs)-1-i] = v
		}
		return sliceIter("list_reverseiterator", out)
	})
	reg("enumerate", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "enumerate", args, kw, "iterable", "start?")
		var n Value = int64(0)
		if a[1] != nil {
			n = a[1]
			if !isInt(n) {
				t.raise(TypeError, "'%s' object cannot be interpreted as an integer", typeName(n))
			}
		}
		src := getIter(t, a[0])
		return &Iterator{Name: "enumerate", Next: func() (Value, bool) {
			v, ok := src.Next()
			if !ok {
				return nil, false
			}
			t.Charge("enumerate", slotBytes, 1)
			r := Tuple{n, v}
			n = binary(t, "+", n, int64(1))
			return r, true
		}}
	})
	reg("zip", cost1, func(t *Thread, args []Value, kw []KV) Value {
		strict := false
		for _, k := range kw {
			if k.Name != "strict" {
				t.raise(TypeError, "zip() got an unexpected keyword argument '%s'", k.Name)
			}
			strict = Truth(k.Value)
		}
		its := make([]*Iterator, len(args))
		for i, a := range args {
			its[i] = getIter(t, a)
		}
		return &Iterator{Name: "zip", Next: func() (Value, bool) {
			if len(its) == 0 {
				return nil, false
			}
			out := make(Tuple, len(its))
			for i, it := range its {
				v, ok := it.Next()
				if !ok {
					if strict && i > 0 {
						t.raise(ValueError, "zip() argument %d is shorter than argument 1", i+1)
					}
					return nil, false
				}
				out[i] = v
			}
			t.Charge("zip", uint64(len(its))*slotBytes, 1)
			return out, true
		}}
	})
	reg("map", cost1, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "map", kw)
		if len(args) < 2 {
			t.raise(TypeError, "map() must have at least two arguments.")
		}
		fn := args[0]
		its := make([]*Iterator, len(args)-1)
		for i, a := range args[1:] {
			its[i] = getIter(t, a)
		}
		return &Iterator{Name: "map", Next: func() (Value, bool) {
			vs := make([]Value, len(its))
			for i, it := range its {
				v, ok := it.Next()
				if !ok {
					return nil, false
				}
				vs[i] = v
			}
			return CallValue(t, fn, vs, nil), true
		}}
	})
	reg("filter", cost1, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "filter", kw)
		if len(args) != 2 {
			t.raise(TypeError, "filter expected 2 arguments, got %d", len(args))
		}
		fn := args[0]
		src := getIter(t, args[1])
		return &Iterator{Name: "filter", Next: func() (Value, bool) {
			for {
				v, ok := src.Next()
				if !ok {
					return nil, false
				}
				t.step()
				var keep bool
				if fn == None {
					keep = Truth(v)
				} else {
					keep = Truth(CallValue(t, fn, []Value{v}, nil))
				}
				if keep {
					return v, true
				}
			}
		}}
	})
	reg("iter", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "iter", args, kw, "object")
		return getIter(t, a[0])
	})
	reg("next", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "next", args, kw, "iterator", "default?")
		it, ok := a[0].(*Iterator)
		if !ok {
			t.raise(TypeError, "'%s' object is not an iterator", typeName(a[0]))
		}
		v, ok := it.Next()
		if !ok {
			if a[1] != nil {
				return a[1]
			}
			panic(&Exception{Class: StopIteration, Line: t.line})
		}
		return v
	})
	reg("isinstance", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "isinstance", args, kw, "obj", "class_or_tuple")
		return isInstance(t, a[0], a[1])
	})
	reg("type", cost1, func(t *Thread, args []Value, kw []KV) Value {
		if len(args) != 1 || len(kw) > 0 {
			t.raise(TypeError, "type() takes 1 argument in this sandbox (classes cannot be created)")
		}
		return typeOf(args[0])
	})
	for _, b := range []struct {
		name string
		base int
		pre  string
	}{{"hex", 16, "0x"}, {"oct", 8, "0o"}, {"bin", 2, "0b"}} {
		b := b
		reg(b.name, cost1, func(t *Thread, args []Value, kw []KV) Value {
			a := argParse(t, b.name, args, kw, "number")
			x, ok := toBig(a[0])
			if !ok {
				t.raise(TypeError, "'%s' object cannot be interpreted as an integer", typeName(a[0]))
			}
			if x.Sign() < 0 {
				return "-" + b.pre + new(big.Int).Neg(x).Text(b.base)
			}
			return b.pre + x.Text(b.base)
		})
	}
	reg("callable", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "callable", args, kw, "obj")
		switch a[0].(type) {
		case *Function, *Builtin, *Type, *ExcClass:
			return true
		}
		return false
	})
	reg("getattr", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "getattr", args, kw, "object", "name", "default?")
		name := asStr(t, a[1], "attribute name")
		if strings.HasPrefix(name, "__") && name != "__name__" {
			t.Stop(&Unsupported{"getattr of dunder attribute " + StrRepr(name) + " is not supported; use the value's own attributes (d.id, d.title, d.text, d.score) and isinstance()"})
		}
		if a[2] != nil {
			return getAttrDefault(t, a[0], name, a[2])
		}
		return getAttr(t, a[0], name)
	})
	reg("hasattr", cost1, func(t *Thread, args []Value, kw []KV) Value {
		a := argParse(t, "hasattr", args, kw, "object", "name")
		name := asStr(t, a[1], "attribute name")
		if strings.HasPrefix(name, "__") {
			return false
		}
		return getAttrDefault(t, a[0], name, nil) != nil
	})
}

func asStr(t *Thread, v Value, what string) string {
	s, ok := v.(string)
	if !ok {
		t.raise(TypeError, "%s must be str, not %s", what, typeName(v))
	}
	return s
}

func builtinPrint(t *Thread, args []Value, kw []KV) Value {
	sep, end := " ", "\n"
	for _, k := range kw {
		switch k.Name {
		case "sep", "end":
			s := ""
			if k.Value != None {
				var ok bool
				s, ok = k.Value.(string)
				if !ok {
					t.raise(TypeError, "%s must be None or a string, not %s", k.Name, typeName(k.Value))
				}
			} else if k.Name == "sep" {
				s = " "
			} else {
				s = "\n"
			}
			if k.Name == "sep" {
				sep = s
			} else {
				end = s
			}
		case "flush":
		case "file":
			t.raise(TypeError, "print(file=...) is not available: programs print only to the observation")
		default:
			t.raise(TypeError, "'%s' is an invalid keyword argument for print()", k.Name)
		}
	}
	if t.PrintHook != nil && t.PrintHook(t, args, sep, end) {
		return None
	}
	var sb strings.Builder
	for i, a := range args {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(Str(a))
	}
	sb.WriteString(end)
	if t.Print != nil {
		if err := t.Print(t, sb.String()); err != nil {
			t.Stop(err)
		}
	}
	return None
}

func builtinRound(t *Thread, args []Value, kw []KV) Value {
	a := argParse(t, "round", args, kw, "number", "ndigits?")
	nd := a[1]
	if nd == nil || nd == None {
		switch x := a[0].(type) {
		case int64, *big.Int:
			return x
		case bool:
			return b2i(x)
		case float64:
			if math.IsInf(x, 0) {
				t.raise(OverflowError, "cannot convert float infinity to integer")
			}
			if math.IsNaN(x) {
				t.raise(ValueError, "cannot convert float NaN to integer")
			}
			r := math.RoundToEven(x)
			if math.Abs(r) < 9e18 {
				return int64(r)
			}
			b, _ := new(big.Float).SetFloat64(r).Int(nil)
			return normBig(b)
		}
		t.raise(TypeError, "type %s doesn't define __round__ method", typeName(a[0]))
	}
	n := toInt(t, nd, "ndigits")
	switch x := a[0].(type) {
	case int64, bool, *big.Int:
		if n >= 0 {
			return binary(t, "+", x, int64(0))
		}
		b, _ := toBig(x)
		if -n > 400 {
			return int64(0)
		}
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(-n), nil)
		q, r := new(big.Int).DivMod(b, p, new(big.Int))
		// half to even
		r2 := new(big.Int).Mul(r, big.NewInt(2))
		if c := r2.Cmp(p); c > 0 || c == 0 && q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
		return normBig(q.Mul(q, p))
	case float64:
		r, err := pyfmt.RoundFloat(x, int(max(min(n, 1<<20), -(1<<20))))
		if err != nil {
			t.raise(OverflowError, "%s", err.Error())
		}
		return r
	}
	t.raise(TypeError, "type %s doesn't define __round__ method", typeName(a[0]))
	return nil
}

// roundFloat is CPython's round(x, n): correctly rounded, half to even on
// the exact decimal value of x.
func roundFloat(x float64, n int) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
		return x
	}
	if n > 330 {
		return x
	}
	if n < -330 {
		return math.Copysign(0, x)
	}
	// exact decimal expansion of x, then round half even at n digits
	s := strconv.FormatFloat(x, 'f', -1, 64)
	exact := new(big.Float).SetPrec(2000).SetFloat64(x)
	_ = s
	r := new(big.Rat)
	exact.Rat(r)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil))
	if n >= 0 {
		r.Mul(r, p)
	} else {
		r.Quo(r, p)
	}
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	m2 := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	if c := m2.Cmp(den); c > 0 || c == 0 && q.Bit(0) == 1 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	res := new(big.Rat).SetInt(q)
	if n >= 0 {
		res.Quo(res, p)
	} else {
		res.Mul(res, p)
	}
	f, _ := res.Float64()
	if f == 0 {
		return math.Copysign(0, x)
	}
	return f
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func minMax(t *Thread, name string, args []Value, kw []KV, dir int) Value {
	var key, def Value
	hasDef := false
	for _, k := range kw {
		switch k.Name {
		case "key":
			if k.Value != None {
				key = k.Value
			}
		case "default":
			def, hasDef = k.Value, true
		default:
			t.raise(TypeError, "'%s' is an invalid keyword argument for %s()", k.Name, name)
		}
	}
	var vs []Value
	switch len(args) {
	case 0:
		t.raise(TypeError, "%s expected at least 1 argument, got 0", name)
	case 1:
		vs = toSlice(t, args[0])
	default:
		if hasDef {
			t.raise(TypeError, "Cannot specify a default for %s() with multiple positional arguments", name)
		}
		vs = args
	}
	if len(vs) == 0 {
		if hasDef {
			return def
		}
		t.raise(ValueError, "%s() iterable argument is empty", name)
	}
	best := vs[0]
	var bestK Value = best
	if key != nil {
		bestK = CallValue(t, key, []Value{best}, nil)
	}
	for _, v := range vs[1:] {
		t.step()
		k := v
		if key != nil {
			k = CallValue(t, key, []Value{v}, nil)
		}
		c, ok := compareValues(k, bestK)
		if !ok {
			t.raise(TypeError, "'%s' not supported between instances of '%s' and '%s'", map[int]string{-1: "<", 1: ">"}[dir], typeName(k), typeName(bestK))
		}
		if c == dir {
			best, bestK = v, k
		}
	}
	return best
}

// listSort sorts l in place (stable) with key= and reverse=.
func listSort(t *Thread, l *List, kw []KV) {
	var key Value
	reverse := false
	for _, k := range kw {
		switch k.Name {
		case "key":
			if k.Value != None {
				key = k.Value
			}
		case "reverse":
			reverse = Truth(k.Value)
		default:
			t.raise(TypeError, "'%s' is an invalid keyword argument for sort()", k.Name)
		}
	}
	keys := l.V
	if key != nil {
		keys = make([]Value, len(l.V))
		for i, v := range l.V {
			keys[i] = CallValue(t, key, []Value{v}, nil)
		}
	}
	idx := make([]int, len(l.V))
	for i := range idx {
		idx[i] = i
	}
	var bad *Exception
	less := func(a, b Value) bool {
		c, ok := compareValues(a, b)
		if !ok && bad == nil {
			bad = &Exception{Class: TypeError, Args: []Value{"'<' not supported between instances of '" + typeName(a) + "' and '" + typeName(b) + "'"}, Line: t.line}
		}
		return c == -1
	}
	if reverse {
		// CPython reverses, sorts stably, reverses back: equal elements keep their order
		sort.SliceStable(idx, func(i, j int) bool { return less(keys[idx[j]], keys[idx[i]]) })
	} else {
		sort.SliceStable(idx, func(i, j int) bool { return less(keys[idx[i]], keys[idx[j]]) })
	}
	if bad != nil {
		panic(bad)
	}
	out := make([]Value, len(l.V))
	for i, j := range idx {
		out[i] = l.V[j]
	}
	l.V = out
}

func isInstance(t *Thread, v, cls Value) bool {
	switch c := cls.(type) {
	case Tuple:
		for _, x := range c {
			if isInstance(t, v, x) {
				return true
			}
		}
		return false
	case *Type:
		return c.Is(v)
	case *ExcClass:
		e, ok := v.(*Exception)
		return ok && e.Class.IsSubclass(c)
	}
	t.raise(TypeError, "isinstance() arg 2 must be a type, a tuple of types, or a union")
	return false
}
