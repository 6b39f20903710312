package python

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"
)

// cmpKey is a functools.cmp_to_key wrapper: it orders by calling fn.
type cmpKey struct {
	t  *Thread
	fn Value
	v  Value
}

// Deque is collections.deque.
type Deque struct {
	V      []Value
	MaxLen int // -1: unbounded
}

// moduleMakers build the importable modules; each runs once, at package
// initialisation, into builtModules. Makers register cost rules and method
// tables (reg, registerCost), which programs on other goroutines read
// without a lock, so no maker may run once programs do. A module is
// immutable to a program (setAttr refuses every attribute), so one value
// is shared by every thread.
var (
	moduleMakers = map[string]func() *Module{}
	builtModules = map[string]*Module{}
)

func (t *Thread) module(name string) *Module {
	if m, ok := t.modules[name]; ok {
		return m
	}
	m, ok := builtModules[name]
	if !ok {
		t.raise(NameError, "module %q is not available", name)
	}
	t.modules[name] = m
	return m
}

// modFn registers a module function with its cost rule.
func modFn(attrs map[string]Value, mod, name string, cost costRule, fn func(t *Thread, args []Value, kw []KV) Value) {
	attrs[name] = mkBuiltin(mod+"."+name, cost, fn)
}

func num(t *Thread, v Value, fn string) float64 {
	f, ok := toFloat(v)
	if !ok || !isNumber(v) {
		t.raise(TypeError, "must be real number, not %s", typeName(v))
	}
	return f
}

func mathDomain(t *Thread, r float64, args ...float64) float64 {
	if math.IsNaN(r) {
		for _, a := range args {
			if math.IsNaN(a) {
				return r
			}
		}
		t.raise(ValueError, "math domain error")
	}
	if math.IsInf(r, 0) {
		for _, a := range args {
			if math.IsInf(a, 0) {
				return r
			}
		}
		t.raise(OverflowError, "math range error")
	}
	return r
}

func init() {
	moduleMakers["math"] = func() *Module {
		a := map[string]Value{"pi": math.Pi, "e": math.E, "tau": 2 * math.Pi, "inf": math.Inf(1), "nan": math.NaN()}
		f1 := func(name string, f func(float64) float64, domain func(float64) bool) {
			modFn(a, "math", name, cost1, func(t *Thread, args []Value, kw []KV) Value {
				x := argParse(t, name, args, kw, "x")
				v := num(t, x[0], name)
				if domain != nil && !domain(v) {
					t.raise(ValueError, "math domain error")
				}
				return mathDomain(t, f(v), v)
			})
		}
		pos := func(x float64) bool { return x > 0 }
		f1("sqrt", math.Sqrt, func(x float64) bool { return x >= 0 || math.IsNaN(x) })
		f1("exp", math.Exp, nil)
		f1("log2", math.Log2, pos)
		f1("log10", math.Log10, pos)
		f1("log1p", math.Log1p, func(x float64) bool { return x > -1 })
		f1("sin", math.Sin, nil)
		f1("cos", math.Cos, nil)
		f1("tan", math.Tan, nil)
		f1("asin", math.Asin, nil)
		f1("acos", math.Acos, nil)
		f1("atan", math.Atan, nil)
		f1("sinh", math.Sinh, nil)
		f1("cosh", math.Cosh, nil)
		f1("tanh", math.Tanh, nil)
		f1("fabs", math.Abs, nil)
		f1("degrees", func(x float64) float64 { return x * 180 / math.Pi }, nil)
		f1("radians", func(x float64) float64 { return x * math.Pi / 180 }, nil)
		modFn(a, "math", "log", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "log", args, kw, "x", "base?")
			var v float64
			if b, ok := x[0].(*big.Int); ok && b.Sign() > 0 {
				// log of a big int: via its bit length
				sh := b.BitLen() - 60
				m, _ := new(big.Float).SetInt(new(big.Int).Rsh(b, uint(sh))).Float64()
				v = math.Log(m) + float64(sh)*math.Ln2
			} else {
				f := num(t, x[0], "log")
				if f <= 0 {
					t.raise(ValueError, "math domain error")
				}
				v = math.Log(f)
			}
			if x[1] != nil {
				b := num(t, x[1], "log")
				if b <= 0 || b == 1 {
					if b == 1 {
						t.raise(ZeroDivisionError, "float division by zero")
					}
					t.raise(ValueError, "math domain error")
				}
				return v / math.Log(b)
			}
			return v
		})
		for _, r := range []struct {
			name  string
			round func(float64) float64
		}{{"floor", math.Floor}, {"ceil", math.Ceil}, {"trunc", math.Trunc}} {
			modFn(a, "math", r.name, cost1, func(t *Thread, args []Value, kw []KV) Value {
				x := argParse(t, r.name, args, kw, "x")
				if isInt(x[0]) {
					return binary(t, "+", x[0], int64(0))
				}
				return floatToInt(t, r.round(num(t, x[0], r.name)))
			})
		}
		modFn(a, "math", "pow", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "pow", args, kw, "x", "y")
			b, e := num(t, x[0], "pow"), num(t, x[1], "pow")
			if b < 0 && e != math.Trunc(e) || b == 0 && e < 0 {
				t.raise(ValueError, "math domain error")
			}
			return mathDomain(t, math.Pow(b, e), b, e)
		})
		modFn(a, "math", "atan2", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "atan2", args, kw, "y", "x")
			return math.Atan2(num(t, x[0], "atan2"), num(t, x[1], "atan2"))
		})
		modFn(a, "math", "hypot", cost1, func(t *Thread, args []Value, kw []KV) Value {
			s := 0.0
			for _, v := range args {
				f := num(t, v, "hypot")
				s += f * f
			}
			return math.Sqrt(s)
		})
		modFn(a, "math", "isclose", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "isclose", args, kw, "a", "b", "rel_tol?", "abs_tol?")
			p, q := num(t, x[0], "isclose"), num(t, x[1], "isclose")
			rel, abst := 1e-9, 0.0
			if x[2] != nil {
				rel = num(t, x[2], "isclose")
			}
			if x[3] != nil {
				abst = num(t, x[3], "isclose")
			}
			if p == q {
				return true
			}
			if math.IsInf(p, 0) || math.IsInf(q, 0) {
				return false
			}
			d := math.Abs(p - q)
			return d <= math.Abs(rel*q) || d <= math.Abs(rel*p) || d <= abst
		})
		pred := func(name string, f func(float64) bool) {
			modFn(a, "math", name, cost1, func(t *Thread, args []Value, kw []KV) Value {
				x := argParse(t, name, args, kw, "x")
				return f(num(t, x[0], name))
			})
		}
		pred("isnan", math.IsNaN)
		pred("isinf", func(f float64) bool { return math.IsInf(f, 0) })
		pred("isfinite", func(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) })
		modFn(a, "math", "gcd", cost1, func(t *Thread, args []Value, kw []KV) Value {
			r := new(big.Int)
			for _, v := range args {
				b, ok := toBig(v)
				if !ok {
					t.raise(TypeError, "'%s' object cannot be interpreted as an integer", typeName(v))
				}
				r.GCD(nil, nil, r, new(big.Int).Abs(b))
			}
			return normBig(r)
		})
		modFn(a, "math", "factorial", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "factorial", args, kw, "n")
			n := toInt(t, x[0], "factorial() argument")
			if n < 0 {
				t.raise(ValueError, "factorial() not defined for negative values")
			}
			if n > 5000 {
				t.raise(OverflowError, "factorial(%d) is too large for this sandbox", n)
			}
			t.Charge("math.factorial", uint64(n)*2, uint64(n))
			return normBig(new(big.Int).MulRange(1, max(n, 1)))
		})
		modFn(a, "math", "comb", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "comb", args, kw, "n", "k")
			n, k := toInt(t, x[0], "n"), toInt(t, x[1], "k")
			if !combArgs(t, "comb", n, k) {
				return int64(0)
			}
			return normBig(new(big.Int).Binomial(n, k))
		})
		modFn(a, "math", "perm", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "perm", args, kw, "n", "k?")
			n := toInt(t, x[0], "n")
			k := n
			if x[1] != nil && x[1] != None {
				k = toInt(t, x[1], "k")
			}
			if !combArgs(t, "perm", n, k) {
				return int64(0)
			}
			return normBig(new(big.Int).MulRange(n-k+1, max(n, 1)))
		})
		modFn(a, "math", "fsum", costScan, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "fsum", args, kw, "seq")
			s := new(big.Float).SetPrec(2000)
			iterate(t, x[0], func(v Value) bool {
				s.Add(s, new(big.Float).SetFloat64(num(t, v, "fsum")))
				return true
			})
			f, _ := s.Float64()
			return f
		})
		modFn(a, "math", "prod", costScan, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "prod", args, kw, "iterable", "start?")
			var p Value = int64(1)
			if x[1] != nil {
				p = x[1]
			}
			iterate(t, x[0], func(v Value) bool {
				p = binary(t, "*", p, v)
				return true
			})
			return p
		})
		modFn(a, "math", "copysign", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "copysign", args, kw, "x", "y")
			return math.Copysign(num(t, x[0], "copysign"), num(t, x[1], "copysign"))
		})
		modFn(a, "math", "fmod", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "fmod", args, kw, "x", "y")
			y := num(t, x[1], "fmod")
			if y == 0 {
				t.raise(ValueError, "math domain error")
			}
			return math.Mod(num(t, x[0], "fmod"), y)
		})
		modFn(a, "math", "isqrt", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "isqrt", args, kw, "n")
			b, ok := toBig(x[0])
			if !ok {
				t.raise(TypeError, "'%s' object cannot be interpreted as an integer", typeName(x[0]))
			}
			if b.Sign() < 0 {
				t.raise(ValueError, "isqrt() argument must be nonnegative")
			}
			return normBig(new(big.Int).Sqrt(b))
		})
		return &Module{Name: "math", Attrs: a}
	}
	moduleMakers["collections"] = func() *Module {
		a := map[string]Value{}
		a["Counter"] = &Type{Name: "Counter", Is: func(v Value) bool { d, ok := v.(*Dict); return ok && d.Counter }, Call: func(t *Thread, args []Value, kw []KV) Value {
			costCopy(t, nil, args)
			d := NewDict()
			d.Counter = true
			if len(args) > 0 {
				counterUpdate(t, d, args[0], 1)
			}
			for _, k := range kw {
				d.Set(k.Name, k.Value)
			}
			return d
		}}
		a["defaultdict"] = &Type{Name: "defaultdict", Is: func(v Value) bool { d, ok := v.(*Dict); return ok && d.Default != nil }, Call: func(t *Thread, args []Value, kw []KV) Value {
			costCopy(t, nil, args)
			d := NewDict()
			if len(args) == 0 || args[0] == None {
				t.raise(TypeError, "defaultdict() without a default factory is a plain dict in this sandbox; pass one: defaultdict(list)")
			}
			switch args[0].(type) {
			case *Function, *Builtin, *Type:
			default:
				t.raise(TypeError, "first argument must be callable or None")
			}
			d.Default = args[0]
			if len(args) > 1 {
				dictUpdate(t, d, args[1])
			}
			return d
		}}
		a["OrderedDict"] = &Type{Name: "OrderedDict", Is: func(v Value) bool { d, ok := v.(*Dict); return ok && d.Ordered }, Call: func(t *Thread, args []Value, kw []KV) Value {
			costCopy(t, nil, args)
			d := NewDict()
			d.Ordered = true
			if len(args) > 0 {
				dictUpdate(t, d, args[0])
			}
			for _, k := range kw {
				d.Set(k.Name, k.Value)
			}
			return d
		}}
		a["deque"] = &Type{Name: "deque", Is: func(v Value) bool { _, ok := v.(*Deque); return ok }, Call: func(t *Thread, args []Value, kw []KV) Value {
			costCopy(t, nil, args)
			x := argParse(t, "deque", args, kw, "iterable?", "maxlen?")
			d := &Deque{MaxLen: -1}
			if x[1] != nil && x[1] != None {
				d.MaxLen = int(toInt(t, x[1], "maxlen"))
				if d.MaxLen < 0 {
					t.raise(ValueError, "maxlen must be non-negative")
				}
			}
			if x[0] != nil {
				for _, v := range toSlice(t, x[0]) {
					d.push(v, false)
				}
			}
			return d
		}}
		a["namedtuple"] = mkBuiltin("collections.namedtuple", cost1, func(t *Thread, args []Value, kw []KV) Value {
			t.raise(TypeError, "namedtuple is not available in this sandbox; use a dict or a plain tuple")
			return nil
		})
		for _, n := range []string{"Counter", "defaultdict", "OrderedDict", "deque"} {
			registerCost("collections."+n, true)
		}
		return &Module{Name: "collections", Attrs: a}
	}
	dequeMethods()
	moduleMakers["itertools"] = makeItertools
	moduleMakers["functools"] = func() *Module {
		a := map[string]Value{}
		modFn(a, "functools", "reduce", costScan, func(t *Thread, args []Value, kw []KV) Value {
			noKw(t, "reduce", kw)
			if len(args) < 2 || len(args) > 3 {
				t.raise(TypeError, "reduce expected 2 or 3 arguments, got %d", len(args))
			}
			vs := toSlice(t, args[1])
			var acc Value
			if len(args) == 3 {
				acc = args[2]
			} else {
				if len(vs) == 0 {
					t.raise(TypeError, "reduce() of empty iterable with no initial value")
				}
				acc, vs = vs[0], vs[1:]
			}
			for _, v := range vs {
				acc = CallValue(t, args[0], []Value{acc, v}, nil)
			}
			return acc
		})
		modFn(a, "functools", "cmp_to_key", cost1, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "cmp_to_key", args, kw, "mycmp")
			fn := x[0]
			return &Builtin{Name: "functools.KeyWrapper", Fn: func(t *Thread, args []Value, kw []KV) Value {
				y := argParse(t, "K", args, kw, "obj")
				return &cmpKey{t: t, fn: fn, v: y[0]}
			}}
		})
		return &Module{Name: "functools", Attrs: a}
	}
	moduleMakers["heapq"] = makeHeapq
	moduleMakers["statistics"] = makeStatistics
	moduleMakers["string"] = func() *Module {
		capwords := mkBuiltin("string.capwords", costCopy, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, "capwords", args, kw, "s", "sep?")
			s := asStr(t, x[0], "s")
			var parts []Value
			sep := " "
			if x[1] != nil && x[1] != None {
				sep = asStr(t, x[1], "sep")
				parts = strValues(strings.Split(s, sep))
			} else {
				parts = splitWhitespace(s, -1)
			}
			out := make([]string, len(parts))
			for i, p := range parts {
				w := p.(string)
				if w != "" {
					c, n := utf8.DecodeRuneInString(w)
					w = strings.ToUpper(string(c)) + strings.ToLower(w[n:])
				}
				out[i] = w
			}
			return strings.Join(out, sep)
		})
		return &Module{Name: "string", Attrs: map[string]Value{
			"capwords":        capwords,
			"ascii_letters":   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
			"ascii_lowercase": "abcdefghijklmnopqrstuvwxyz",
			"ascii_uppercase": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
			"digits":          "0123456789",
			"hexdigits":       "0123456789abcdefABCDEF",
			"octdigits":       "01234567",
			"punctuation":     "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
			"whitespace":      " \t\n\r\x0b\x0c",
			"printable":       "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c",
		}}
	}
	moduleMakers["json"] = makeJSON
	moduleMakers["re"] = makeRe
	for name, mk := range moduleMakers {
		builtModules[name] = mk() // registers its cost rules and methods
	}
}

func (d *Deque) push(v Value, left bool) {
	if d.MaxLen == 0 {
		return
	}
	if left {
		d.V = append([]Value{v}, d.V...)
		if d.MaxLen >= 0 && len(d.V) > d.MaxLen {
			d.V = d.V[:d.MaxLen]
		}
		return
	}
	d.V = append(d.V, v)
	if d.MaxLen >= 0 && len(d.V) > d.MaxLen {
		d.V = d.V[len(d.V)-d.MaxLen:]
	}
}

func dequeMethods() {
	Q := func(v Value) *Deque { return v.(*Deque) }
	reg("deque", "append", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "append", a, kw, "x")
		t.Charge("deque.append", slotBytes, 0)
		Q(r).push(x[0], false)
		return None
	})
	reg("deque", "appendleft", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "appendleft", a, kw, "x")
		t.Charge("deque.appendleft", slotBytes, 0)
		Q(r).push(x[0], true)
		return None
	})
	reg("deque", "pop", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		d := Q(r)
		if len(d.V) == 0 {
			t.raise(IndexError, "pop from an empty deque")
		}
		v := d.V[len(d.V)-1]
		d.V = d.V[:len(d.V)-1]
		return v
	})
	reg("deque", "popleft", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value {
		d := Q(r)
		if len(d.V) == 0 {
			t.raise(IndexError, "pop from an empty deque")
		}
		v := d.V[0]
		d.V = d.V[1:]
		return v
	})
	reg("deque", "extend", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "extend", a, kw, "iterable")
		for _, v := range toSlice(t, x[0]) {
			Q(r).push(v, false)
		}
		return None
	})
	reg("deque", "extendleft", costCopy, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "extendleft", a, kw, "iterable")
		for _, v := range toSlice(t, x[0]) {
			Q(r).push(v, true)
		}
		return None
	})
	reg("deque", "clear", cost1, func(t *Thread, r Value, a []Value, kw []KV) Value { Q(r).V = nil; return None })
	reg("deque", "rotate", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "rotate", a, kw, "n?")
		n := int64(1)
		if x[0] != nil {
			n = toInt(t, x[0], "n")
		}
		d := Q(r)
		if len(d.V) == 0 {
			return None
		}
		k := int(((n % int64(len(d.V))) + int64(len(d.V))) % int64(len(d.V)))
		d.V = append(append([]Value{}, d.V[len(d.V)-k:]...), d.V[:len(d.V)-k]...)
		return None
	})
	reg("deque", "count", costScan, func(t *Thread, r Value, a []Value, kw []KV) Value {
		x := argParse(t, "count", a, kw, "x")
		return countEqual(Q(r).V, x[0])
	})
}

// combArgs raises math.comb's and math.perm's argument errors (name is
// which); false when k > n, where both are 0.
func combArgs(t *Thread, name string, n, k int64) bool {
	if n < 0 || k < 0 {
		t.raise(ValueError, "n must be a non-negative integer")
	}
	if n > 10000 {
		t.raise(OverflowError, "%s(%d, ...) is too large for this sandbox", name, n)
	}
	return k <= n
}

func makeItertools() *Module {
	a := map[string]Value{}
	modFn(a, "itertools", "chain", cost1, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "chain", kw)
		return chainIter(t, sliceIter("", args))
	})
	a["chain"].(*Builtin).Self = nil
	chainFrom := mkBuiltin("itertools.chain.from_iterable", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "from_iterable", args, kw, "iterable")
		return chainIter(t, getIter(t, x[0]))
	})
	a["chain.from_iterable"] = chainFrom
	modFn(a, "itertools", "islice", cost1, func(t *Thread, args []Value, kw []KV) Value {
		noKw(t, "islice", kw)
		if len(args) < 2 || len(args) > 4 {
			t.raise(TypeError, "islice expected 2 to 4 arguments")
		}
		src := getIter(t, args[0])
		start, stop, step := int64(0), int64(-1), int64(1)
		get := func(v Value, what string) int64 {
			if v == None {
				return -1
			}
			n := toInt(t, v, what)
			if n < 0 {
				t.raise(ValueError, "Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.")
			}
			return n
		}
		if len(args) == 2 {
			stop = get(args[1], "stop")
		} else {
			start = max(get(args[1], "start"), 0)
			stop = get(args[2], "stop")
			if len(args) == 4 {
				step = get(args[3], "step")
				if step == 0 {
					t.raise(ValueError, "Step for islice() must be a positive integer or None.")
				}
				if step < 0 {
					step = 1
				}
			}
		}
		i := int64(0)
		next := start
		return &Iterator{Name: "itertools.islice", Next: func() (Value, bool) {
			for {
				if stop >= 0 && next >= stop {
					return nil, false
				}
				v, ok := src.Next()
				if !ok {
					return nil, false
				}
				i++
				if i-1 == next {
					next += step
					return v, true
				}
			}
		}}
	})
	modFn(a, "itertools", "count", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "count", args, kw, "start?", "step?")
		var n, st Value = int64(0), int64(1)
		if x[0] != nil {
			n = x[0]
		}
		if x[1] != nil {
			st = x[1]
		}
		return &Iterator{Name: "itertools.count", Next: func() (Value, bool) {
			v := n
			n = binary(t, "+", n, st)
			return v, true
		}}
	})
	modFn(a, "itertools", "repeat", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "repeat", args, kw, "object", "times?")
		n := int64(-1)
		if x[1] != nil {
			n = toInt(t, x[1], "times")
		}
		return &Iterator{Name: "itertools.repeat", Next: func() (Value, bool) {
			if n == 0 {
				return nil, false
			}
			if n > 0 {
				n--
			}
			return x[0], true
		}}
	})
	combos := func(name string, perm, repl bool) {
		modFn(a, "itertools", name, costCopy, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, name, args, kw, "iterable", "r?")
			pool := toSlice(t, x[0])
			n := len(pool)
			r := n
			if x[1] != nil && x[1] != None {
				r = int(toInt(t, x[1], "r"))
			} else if !perm {
				t.raise(TypeError, "%s() missing required argument 'r' (pos 2)", name)
			}
			if r < 0 {
				t.raise(ValueError, "r must be non-negative")
			}
			var out []Value
			idx := make([]int, r)
			used := make([]bool, n)
			var rec func(pos, start int)
			rec = func(pos, start int) {
				if pos == r {
					t.Charge(name, uint64(r)*slotBytes+64, uint64(r)+1)
					tu := make(Tuple, r)
					for i, j := range idx {
						tu[i] = pool[j]
					}
					out = append(out, tu)
					return
				}
				for j := 0; j < n; j++ {
					switch {
					case perm:
						if used[j] {
							continue
						}
						used[j] = true
						idx[pos] = j
						rec(pos+1, 0)
						used[j] = false
						continue
					case repl:
						if j < start {
							continue
						}
						idx[pos] = j
						rec(pos+1, j)
					default:
						if j < start {
							continue
						}
						idx[pos] = j
						rec(pos+1, j+1)
					}
				}
			}
			if r <= n || repl {
				rec(0, 0)
			}
			return sliceIter("itertools."+name, out)
		})
	}
	combos("combinations", false, false)
	combos("combinations_with_replacement", false, true)
	combos("permutations", true, false)
	modFn(a, "itertools", "product", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		rep := 1
		for _, k := range kw {
			if k.Name != "repeat" {
				t.raise(TypeError, "product() got an unexpected keyword argument '%s'", k.Name)
			}
			rep = int(toInt(t, k.Value, "repeat"))
		}
		var pools [][]Value
		for i := 0; i < rep; i++ {
			for _, p := range args {
				pools = append(pools, toSlice(t, p))
			}
		}
		out := []Value{Tuple{}}
		for _, p := range pools {
			var next []Value
			for _, prefix := range out {
				for _, v := range p {
					t.Charge("itertools.product", uint64(len(pools))*slotBytes+64, uint64(len(pools))+1)
					tu := append(append(Tuple{}, prefix.(Tuple)...), v)
					next = append(next, tu)
				}
			}
			out = next
		}
		return sliceIter("itertools.product", out)
	})
	modFn(a, "itertools", "groupby", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "groupby", args, kw, "iterable", "key?")
		vs := toSlice(t, x[0])
		var out []Value
		var curK Value
		var cur []Value
		for i, v := range vs {
			k := v
			if x[1] != nil && x[1] != None {
				k = CallValue(t, x[1], []Value{v}, nil)
			}
			if i > 0 && !Equal(k, curK) {
				out = append(out, Tuple{curK, sliceIter("itertools._grouper", cur)})
				cur = nil
			}
			curK = k
			cur = append(cur, v)
		}
		if len(vs) > 0 {
			out = append(out, Tuple{curK, sliceIter("itertools._grouper", cur)})
		}
		return sliceIter("itertools.groupby", out)
	})
	modFn(a, "itertools", "accumulate", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "accumulate", args, kw, "iterable", "func?", "initial?")
		vs := toSlice(t, x[0])
		var out []Value
		var acc Value
		if x[2] != nil && x[2] != None {
			acc = x[2]
			out = append(out, acc)
		}
		for _, v := range vs {
			if acc == nil {
				acc = v
			} else if x[1] != nil && x[1] != None {
				acc = CallValue(t, x[1], []Value{acc, v}, nil)
			} else {
				acc = binary(t, "+", acc, v)
			}
			out = append(out, acc)
		}
		return sliceIter("itertools.accumulate", out)
	})
	modFn(a, "itertools", "zip_longest", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		var fill Value = None
		for _, k := range kw {
			if k.Name == "fillvalue" {
				fill = k.Value
			}
		}
		lists := make([][]Value, len(args))
		n := 0
		for i, a := range args {
			lists[i] = toSlice(t, a)
			n = max(n, len(lists[i]))
		}
		out := make([]Value, n)
		for i := 0; i < n; i++ {
			tu := make(Tuple, len(lists))
			for j, l := range lists {
				if i < len(l) {
					tu[j] = l[i]
				} else {
					tu[j] = fill
				}
			}
			out[i] = tu
		}
		return sliceIter("itertools.zip_longest", out)
	})
	modFn(a, "itertools", "starmap", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "starmap", args, kw, "function", "iterable")
		src := getIter(t, x[1])
		return &Iterator{Name: "itertools.starmap", Next: func() (Value, bool) {
			v, ok := src.Next()
			if !ok {
				return nil, false
			}
			return CallValue(t, x[0], toSlice(t, v), nil), true
		}}
	})
	modFn(a, "itertools", "takewhile", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "takewhile", args, kw, "predicate", "iterable")
		src := getIter(t, x[1])
		done := false
		return &Iterator{Name: "itertools.takewhile", Next: func() (Value, bool) {
			if done {
				return nil, false
			}
			v, ok := src.Next()
			if !ok || !Truth(CallValue(t, x[0], []Value{v}, nil)) {
				done = true
				return nil, false
			}
			return v, true
		}}
	})
	modFn(a, "itertools", "dropwhile", cost1, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "dropwhile", args, kw, "predicate", "iterable")
		src := getIter(t, x[1])
		dropping := true
		return &Iterator{Name: "itertools.dropwhile", Next: func() (Value, bool) {
			for {
				v, ok := src.Next()
				if !ok {
					return nil, false
				}
				if dropping && Truth(CallValue(t, x[0], []Value{v}, nil)) {
					continue
				}
				dropping = false
				return v, true
			}
		}}
	})
	m := &Module{Name: "itertools", Attrs: a}
	// chain.from_iterable: reachable as an attribute of chain
	delete(a, "chain.from_iterable")
	chain := a["chain"].(*Builtin)
	a["chain"] = &Type{Name: "chain", Is: func(v Value) bool { it, ok := v.(*Iterator); return ok && it.Name == "itertools.chain" }, Call: chain.Fn, Attrs: map[string]Value{"from_iterable": chainFrom}}
	return m
}

func chainIter(t *Thread, outer *Iterator) *Iterator {
	var cur *Iterator
	return &Iterator{Name: "itertools.chain", Next: func() (Value, bool) {
		for {
			if cur != nil {
				if v, ok := cur.Next(); ok {
					return v, true
				}
			}
			nx, ok := outer.Next()
			if !ok {
				return nil, false
			}
			cur = getIter(t, nx)
		}
	}}
}

func heapLess(t *Thread, a, b Value) bool {
	c, ok := compareValues(a, b)
	if !ok {
		t.raise(TypeError, "'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
	}
	return c == -1
}

func siftDown(t *Thread, h []Value, start, pos int) {
	item := h[pos]
	for pos > start {
		parent := (pos - 1) >> 1
		if heapLess(t, item, h[parent]) {
			h[pos] = h[parent]
			pos = parent
			continue
		}
		break
	}
	h[pos] = item
}

func siftUp(t *Thread, h []Value, pos int) {
	end := len(h)
	start := pos
	item := h[pos]
	child := 2*pos + 1
	for child < end {
		right := child + 1
		if right < end && !heapLess(t, h[child], h[right]) {
			child = right
		}
		h[pos] = h[child]
		pos = child
		child = 2*pos + 1
	}
	h[pos] = item
	siftDown(t, h, start, pos)
}

func makeHeapq() *Module {
	a := map[string]Value{}
	list := func(t *Thread, v Value) *List {
		l, ok := v.(*List)
		if !ok {
			t.raise(TypeError, "heap argument must be a list")
		}
		return l
	}
	modFn(a, "heapq", "heappush", costScan, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "heappush", args, kw, "heap", "item")
		l := list(t, x[0])
		t.Charge("heappush", slotBytes, 0)
		l.V = append(l.V, x[1])
		siftDown(t, l.V, 0, len(l.V)-1)
		return None
	})
	modFn(a, "heapq", "heappop", costScan, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "heappop", args, kw, "heap")
		l := list(t, x[0])
		if len(l.V) == 0 {
			t.raise(IndexError, "index out of range")
		}
		last := l.V[len(l.V)-1]
		l.V = l.V[:len(l.V)-1]
		if len(l.V) == 0 {
			return last
		}
		r := l.V[0]
		l.V[0] = last
		siftUp(t, l.V, 0)
		return r
	})
	modFn(a, "heapq", "heapify", costSort, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "heapify", args, kw, "x")
		l := list(t, x[0])
		for i := len(l.V)/2 - 1; i >= 0; i-- {
			siftUp(t, l.V, i)
		}
		return None
	})
	modFn(a, "heapq", "heappushpop", costScan, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "heappushpop", args, kw, "heap", "item")
		l := list(t, x[0])
		if len(l.V) > 0 && heapLess(t, l.V[0], x[1]) {
			r := l.V[0]
			l.V[0] = x[1]
			siftUp(t, l.V, 0)
			return r
		}
		return x[1]
	})
	modFn(a, "heapq", "heapreplace", costScan, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "heapreplace", args, kw, "heap", "item")
		l := list(t, x[0])
		if len(l.V) == 0 {
			t.raise(IndexError, "index out of range")
		}
		r := l.V[0]
		l.V[0] = x[1]
		siftUp(t, l.V, 0)
		return r
	})
	nbest := func(name string, largest bool) {
		modFn(a, "heapq", name, costSort, func(t *Thread, args []Value, kw []KV) Value {
			if len(args) != 2 {
				t.raise(TypeError, "%s expected 2 arguments", name)
			}
			n := int(toInt(t, args[0], "n"))
			vs := &List{V: append([]Value{}, toSlice(t, args[1])...)}
			skw := append([]KV{}, kw...)
			if largest {
				skw = append(skw, KV{"reverse", true})
			}
			listSort(t, vs, skw)
			if n < 0 {
				n = 0
			}
			if n < len(vs.V) {
				vs.V = vs.V[:n]
			}
			return vs
		})
	}
	nbest("nlargest", true)
	nbest("nsmallest", false)
	return &Module{Name: "heapq", Attrs: a}
}

func makeStatistics() *Module {
	a := map[string]Value{}
	nums := func(t *Thread, name string, args []Value, kw []KV) []Value {
		x := argParse(t, name, args, kw, "data")
		vs := toSlice(t, x[0])
		for _, v := range vs {
			if !isNumber(v) {
				t.raise(TypeError, "can't convert type '%s' to numerator/denominator", typeName(v))
			}
		}
		return vs
	}
	// exact mean through rationals, like statistics._sum
	exactMean := func(t *Thread, vs []Value) (*big.Rat, bool) {
		s := new(big.Rat)
		allInt := true
		for _, v := range vs {
			switch x := v.(type) {
			case float64:
				allInt = false
				if math.IsInf(x, 0) || math.IsNaN(x) {
					return nil, false
				}
				r := new(big.Rat)
				r.SetFloat64(x)
				s.Add(s, r)
			default:
				b, _ := toBig(x)
				s.Add(s, new(big.Rat).SetInt(b))
			}
		}
		s.Quo(s, new(big.Rat).SetInt64(int64(len(vs))))
		return s, allInt
	}
	ratValue := func(r *big.Rat, allInt bool) Value {
		if allInt && r.IsInt() {
			return normBig(new(big.Int).Set(r.Num()))
		}
		f, _ := r.Float64()
		return f
	}
	modFn(a, "statistics", "mean", costScan, func(t *Thread, args []Value, kw []KV) Value {
		vs := nums(t, "mean", args, kw)
		if len(vs) == 0 {
			panic(&Exception{Class: StatisticsError, Args: []Value{"mean requires at least one data point"}, Line: t.line})
		}
		r, allInt := exactMean(t, vs)
		if r == nil {
			s := 0.0
			for _, v := range vs {
				f, _ := toFloat(v)
				s += f
			}
			return s / float64(len(vs))
		}
		if allInt && !r.IsInt() {
			f, _ := r.Float64()
			return f
		}
		return ratValue(r, allInt)
	})
	modFn(a, "statistics", "fmean", costScan, func(t *Thread, args []Value, kw []KV) Value {
		vs := nums(t, "fmean", args, kw)
		if len(vs) == 0 {
			panic(&Exception{Class: StatisticsError, Args: []Value{"fmean requires at least one data point"}, Line: t.line})
		}
		s := new(big.Float).SetPrec(2000)
		for _, v := range vs {
			f, _ := toFloat(v)
			s.Add(s, new(big.Float).SetFloat64(f))
		}
		f, _ := s.Float64()
		return f / float64(len(vs))
	})
	med := func(name string, which int) {
		modFn(a, "statistics", name, costSort, func(t *Thread, args []Value, kw []KV) Value {
			vs := &List{V: append([]Value{}, nums(t, name, args, kw)...)}
			if len(vs.V) == 0 {
				panic(&Exception{Class: StatisticsError, Args: []Value{"no median for empty data"}, Line: t.line})
			}
			listSort(t, vs, nil)
			n := len(vs.V)
			if n%2 == 1 {
				return vs.V[n/2]
			}
			switch which {
			case -1:
				return vs.V[n/2-1]
			case 1:
				return vs.V[n/2]
			}
			return binary(t, "/", binary(t, "+", vs.V[n/2-1], vs.V[n/2]), int64(2))
		})
	}
	med("median", 0)
	med("median_low", -1)
	med("median_high", 1)
	modFn(a, "statistics", "mode", costScan, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "mode", args, kw, "data")
		vs := toSlice(t, x[0])
		if len(vs) == 0 {
			panic(&Exception{Class: StatisticsError, Args: []Value{"no mode for empty data"}, Line: t.line})
		}
		d := NewDict()
		d.Counter = true
		counterUpdate(t, d, &List{V: vs}, 1)
		return counterOrder(d.Items())[0][0]
	})
	variance := func(name string, sample, root bool) {
		modFn(a, "statistics", name, costScan, func(t *Thread, args []Value, kw []KV) Value {
			vs := nums(t, name, args[:min(1, len(args))], kw)
			if sample && len(vs) < 2 {
				panic(&Exception{Class: StatisticsError, Args: []Value{"variance requires at least two data points"}, Line: t.line})
			}
			if len(vs) < 1 {
				panic(&Exception{Class: StatisticsError, Args: []Value{"pvariance requires at least one data point"}, Line: t.line})
			}
			m, allInt := exactMean(t, vs)
			ss := new(big.Rat)
			for _, v := range vs {
				var r big.Rat
				if f, ok := v.(float64); ok {
					r.SetFloat64(f)
				} else {
					b, _ := toBig(v)
					r.SetInt(b)
				}
				r.Sub(&r, m)
				r.Mul(&r, &r)
				ss.Add(ss, &r)
			}
			den := int64(len(vs))
			if sample {
				den--
			}
			ss.Quo(ss, new(big.Rat).SetInt64(den))
			if root {
				f, _ := ss.Float64()
				return math.Sqrt(f)
			}
			if allInt && ss.IsInt() {
				return normBig(new(big.Int).Set(ss.Num()))
			}
			f, _ := ss.Float64()
			return f
		})
	}
	variance("variance", true, false)
	variance("pvariance", false, false)
	variance("stdev", true, true)
	variance("pstdev", false, true)
	return &Module{Name: "statistics", Attrs: a}
}
