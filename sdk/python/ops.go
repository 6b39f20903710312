package python

import (
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Cost constants (bytes charged per element; see doc.go).
const (
	slotBytes   = 48  // one list element: interface slot, boxed value, growth
	entryBytes  = 192 // one dict or set entry
	strHeader   = 16
	kib         = 1024
	maxBigBits  = 1 << 26 // ints beyond 64 Mbit (8 MiB) are refused (memory budget)
	maxRepeatSz = 1 << 30
)

func sortedKeys(m map[string]Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func unary(t *Thread, op string, v Value) Value {
	switch op {
	case "-":
		switch v := v.(type) {
		case int64:
			if v == math.MinInt64 {
				return new(big.Int).Neg(big.NewInt(v))
			}
			return -v
		case bool:
			return -b2i(v)
		case *big.Int:
			return normBig(new(big.Int).Neg(v))
		case float64:
			return -v
		}
	case "+":
		switch v := v.(type) {
		case int64, *big.Int, float64:
			return v
		case bool:
			return b2i(v)
		}
	case "~":
		switch v := v.(type) {
		case int64:
			return ^v
		case bool:
			return ^b2i(v)
		case *big.Int:
			return normBig(new(big.Int).Not(v))
		}
	}
	t.raise(TypeError, "bad operand type for unary %s: '%s'", op, typeName(v))
	return nil
}

func opName(op string) string { return op }

func binErr(t *Thread, op string, x, y Value) {
	t.raise(TypeError, "unsupported operand type(s) for %s: '%s' and '%s'", opName(op), typeName(x), typeName(y))
}

// binary is x op y for + - * / // % ** << >> & | ^.
func binary(t *Thread, op string, x, y Value) Value {
	if xb, ok := x.(bool); ok {
		if _, isb := y.(bool); !(isb && (op == "&" || op == "|" || op == "^")) {
			x = b2i(xb)
		}
	}
	if yb, ok := y.(bool); ok {
		if _, isb := x.(bool); !isb {
			y = b2i(yb)
		}
	}
	switch a := x.(type) {
	case int64:
		switch b := y.(type) {
		case int64:
			return intOp(t, op, a, b)
		case *big.Int:
			return bigOp(t, op, big.NewInt(a), b)
		case float64:
			return floatOp(t, op, float64(a), b)
		}
	case *big.Int:
		switch b := y.(type) {
		case int64:
			return bigOp(t, op, a, big.NewInt(b))
		case *big.Int:
			return bigOp(t, op, a, b)
		case float64:
			fa, _ := toFloat(a)
			return floatOp(t, op, fa, b)
		}
	case float64:
		if fb, ok := toFloat(y); ok && isNumber(y) {
			return floatOp(t, op, a, fb)
		}
	case bool:
		if b, ok := y.(bool); ok {
			switch op {
			case "&":
				return a && b
			case "|":
				return a || b
			case "^":
				return a != b
			}
		}
	case string:
		switch op {
		case "+":
			if b, ok := y.(string); ok {
				n := uint64(len(a) + len(b))
				t.Charge("the + operation", n+strHeader, n/kib)
				return a + b
			}
		case "*":
			if n, ok := y.(int64); ok {
				return repeatStr(t, a, n)
			}
		case "%":
			return percentFormat(t, a, y)
		}
	case *List:
		switch op {
		case "+":
			if b, ok := y.(*List); ok {
				n := uint64(len(a.V) + len(b.V))
				t.Charge("the + operation", n*16+64, n)
				out := make([]Value, 0, n)
				return &List{V: append(append(out, a.V...), b.V...)}
			}
		case "*":
			if n, ok := y.(int64); ok {
				return &List{V: repeatSeq(t, a.V, n)}
			}
		}
	case Tuple:
		switch op {
		case "+":
			if b, ok := y.(Tuple); ok {
				n := uint64(len(a) + len(b))
				t.Charge("the + operation", n*16+64, n)
				out := make(Tuple, 0, n)
				return append(append(out, a...), b...)
			}
		case "*":
			if n, ok := y.(int64); ok {
				return Tuple(repeatSeq(t, a, n))
			}
		}
	case *Set:
		if b, ok := y.(*Set); ok {
			return setOp(t, op, a, b)
		}
	case *Dict:
		if b, ok := y.(*Dict); ok && op == "|" && !(a.Counter && b.Counter) {
			t.Charge("dict |", uint64(a.Len()+b.Len())*entryBytes, uint64(a.Len()+b.Len()))
			d := a.Copy()
			for _, kv := range b.Items() {
				d.Set(kv[0], kv[1])
			}
			return d
		}
		if b, ok := y.(*Dict); ok && a.Counter && b.Counter && (op == "+" || op == "-" || op == "&" || op == "|") {
			return counterOp(t, op, a, b)
		}
	}
	if op == "+" {
		switch x.(type) {
		case string, *List, Tuple:
			t.raise(TypeError, "can only concatenate %s (not \"%s\") to %s", typeName(x), typeName(y), typeName(x))
		}
	}
	// int * str, int * list
	if op == "*" {
		if n, ok := x.(int64); ok {
			switch b := y.(type) {
			case string:
				return repeatStr(t, b, n)
			case *List:
				return &List{V: repeatSeq(t, b.V, n)}
			case Tuple:
				return Tuple(repeatSeq(t, b, n))
			}
		}
	}
	binErr(t, op, x, y)
	return nil
}

func repeatStr(t *Thread, s string, n int64) Value {
	if n <= 0 || s == "" {
		return ""
	}
	total := uint64(len(s)) * uint64(n)
	if n > maxRepeatSz || total > maxRepeatSz || total/uint64(len(s)) != uint64(n) {
		t.Charge("the * operation", total, 0)
	}
	t.Charge("the * operation", total+strHeader, total/kib+1)
	return strings.Repeat(s, int(n))
}

func repeatSeq(t *Thread, v []Value, n int64) []Value {
	if n <= 0 || len(v) == 0 {
		return []Value{}
	}
	if n > maxRepeatSz || uint64(len(v))*uint64(n) > maxRepeatSz {
		t.Charge("the * operation", uint64(len(v))*uint64(n)*16, 0)
	}
	total := uint64(len(v)) * uint64(n)
	t.Charge("the * operation", total*16+64, total)
	out := make([]Value, 0, total)
	for i := int64(0); i < n; i++ {
		out = append(out, v...)
	}
	return out
}

func intOp(t *Thread, op string, a, b int64) Value {
	switch op {
	case "+":
		s := a + b
		if (s > a) == (b > 0) {
			return s
		}
	case "-":
		s := a - b
		if (s < a) == (b > 0) {
			return s
		}
	case "*":
		if a == 0 || b == 0 {
			return int64(0)
		}
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		if hi == 0 && lo < 1<<63 && a != math.MinInt64 && b != math.MinInt64 {
			r := int64(lo)
			if (a < 0) != (b < 0) {
				r = -r
			}
			return r
		}
	case "/":
		if b == 0 {
			t.raise(ZeroDivisionError, "division by zero")
		}
		if abs64(a) < 1<<53 && abs64(b) < 1<<53 {
			return float64(a) / float64(b)
		}
	case "//":
		if b == 0 {
			t.raise(ZeroDivisionError, "integer division or modulo by zero")
		}
		if !(a == math.MinInt64 && b == -1) {
			q := a / b
			if (a%b != 0) && ((a < 0) != (b < 0)) {
				q--
			}
			return q
		}
	case "%":
		if b == 0 {
			t.raise(ZeroDivisionError, "integer division or modulo by zero")
		}
		if b == -1 {
			return int64(0)
		}
		m := a % b
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return m
	case "&":
		return a & b
	case "|":
		return a | b
	case "^":
		return a ^ b
	case "<<":
		if b < 0 {
			t.raise(ValueError, "negative shift count")
		}
		if b < 62 && abs64(a) < 1<<(62-b) {
			return a << b
		}
	case ">>":
		if b < 0 {
			t.raise(ValueError, "negative shift count")
		}
		if b >= 63 {
			if a < 0 {
				return int64(-1)
			}
			return int64(0)
		}
		return a >> b
	case "**":
		if b < 0 {
			return floatOp(t, op, float64(a), float64(b))
		}
		r := int64(1)
		base := a
		e := b
		ok := true
		for e > 0 && ok {
			if e&1 == 1 {
				v := intOp(t, "*", r, base)
				if rv, isInt := v.(int64); isInt {
					r = rv
				} else {
					ok = false
					break
				}
			}
			e >>= 1
			if e > 0 {
				v := intOp(t, "*", base, base)
				if bv, isInt := v.(int64); isInt {
					base = bv
				} else {
					ok = false
				}
			}
		}
		if ok {
			return r
		}
	}
	return bigOp(t, op, big.NewInt(a), big.NewInt(b))
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func bigOp(t *Thread, op string, a, b *big.Int) Value {
	ab, bb := uint64(a.BitLen()), uint64(b.BitLen())
	switch op {
	case "+", "-", "&", "|", "^":
		t.Charge("int "+op, (max(ab, bb)+1)/8+32, max(ab, bb)/1024)
	case "*":
		rb := ab + bb
		if rb > maxBigBits {
			t.Stop(t.budgetErr("memory", "an integer of about "+strconv.FormatUint(rb, 10)+" bits", rb/8, t.Mem, maxBigBits/8))
		}
		t.Charge("int *", rb/8+32, (ab/64+1)*(bb/64+1)/64)
	case "<<":
		if !b.IsInt64() || uint64(b.Int64())+ab > maxBigBits {
			t.Stop(t.budgetErr("memory", "an integer of over 2^26 bits", maxBigBits/8+1, t.Mem, maxBigBits/8))
		}
		t.Charge("int <<", (ab+uint64(b.Int64()))/8+32, 1)
	case "**":
		if b.Sign() < 0 {
			fa, _ := toFloat(a)
			fb, _ := toFloat(b)
			return floatOp(t, op, fa, fb)
		}
		if !b.IsInt64() || ab*uint64(b.Int64()) > maxBigBits {
			if ab <= 1 && a.Sign() >= 0 {
				return normBig(a) // 0 or 1
			}
			t.Stop(t.budgetErr("memory", "an integer of over a million bits", maxBigBits/8+1, t.Mem, maxBigBits/8))
		}
		rb := ab * uint64(b.Int64())
		t.Charge("int **", rb/8+32, (rb/64+1)*(rb/64+1)/64)
	}
	r := new(big.Int)
	switch op {
	case "+":
		r.Add(a, b)
	case "-":
		r.Sub(a, b)
	case "*":
		r.Mul(a, b)
	case "/":
		if b.Sign() == 0 {
			t.raise(ZeroDivisionError, "division by zero")
		}
		q, _ := new(big.Rat).SetFrac(a, b).Float64()
		return q
	case "//", "%":
		if b.Sign() == 0 {
			t.raise(ZeroDivisionError, "integer division or modulo by zero")
		}
		q, m := new(big.Int).DivMod(a, b, new(big.Int)) // Euclidean: m ≥ 0
		if m.Sign() != 0 && b.Sign() < 0 {
			q.Add(q, big.NewInt(1))
			m.Add(m, b)
		}
		if op == "//" {
			return normBig(q)
		}
		return normBig(m)
	case "&":
		r.And(a, b)
	case "|":
		r.Or(a, b)
	case "^":
		r.Xor(a, b)
	case "<<":
		r.Lsh(a, uint(b.Int64()))
	case ">>":
		if !b.IsInt64() || b.Int64() < 0 {
			t.raise(ValueError, "negative shift count")
		}
		r.Rsh(a, uint(min(b.Int64(), 1<<30)))
	case "**":
		r.Exp(a, b, nil)
	default:
		t.raise(TypeError, "unsupported operand type(s) for %s: 'int' and 'int'", op)
	}
	return normBig(r)
}

func floatOp(t *Thread, op string, a, b float64) Value {
	switch op {
	case "+":
		return a + b
	case "-":
		return a - b
	case "*":
		return a * b
	case "/":
		if b == 0 {
			t.raise(ZeroDivisionError, "float division by zero")
		}
		return a / b
	case "//":
		if b == 0 {
			t.raise(ZeroDivisionError, "float floor division by zero")
		}
		return math.Floor(a / b)
	case "%":
		if b == 0 {
			t.raise(ZeroDivisionError, "float modulo")
		}
		m := math.Mod(a, b)
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return m
	case "**":
		if a == 0 && b < 0 {
			t.raise(ZeroDivisionError, "0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) {
			t.raise(ValueError, "negative number cannot be raised to a fractional power (complex numbers are not supported)")
		}
		r := math.Pow(a, b)
		if math.IsInf(r, 0) && !math.IsInf(a, 0) {
			t.raise(OverflowError, "(34, 'Numerical result out of range')")
		}
		return r
	}
	t.raise(TypeError, "unsupported operand type(s) for %s: 'float' and 'float'", op)
	return nil
}

func setOp(t *Thread, op string, a, b *Set) Value {
	t.Charge("set "+op, uint64(a.used+b.used)*entryBytes, uint64(a.used+b.used)+1)
	var r *Set
	switch op {
	case "|":
		r = a.Copy()
		r.merge(b)
	case "&":
		r = NewSet()
		small, big := b, a
		if b.used > a.used {
			small, big = a, b
		}
		for _, e := range small.table {
			if e.state == 1 && big.find(e.hk, e.hash) >= 0 {
				r.add(e.key, e.hk, e.hash)
			}
		}
	case "-":
		r = NewSet()
		if a.used>>2 > b.used {
			r = a.Copy()
			for _, e := range b.table {
				if e.state == 1 {
					if j := r.find(e.hk, e.hash); j >= 0 {
						r.table[j] = setEntry{state: 2, hash: -1}
						r.used--
					}
				}
			}
		} else {
			for _, e := range a.table {
				if e.state == 1 && b.find(e.hk, e.hash) < 0 {
					r.add(e.key, e.hk, e.hash)
				}
			}
		}
	case "^":
		// CPython: a copy of the right operand, updated with the left
		r = b.Copy()
		for _, e := range a.table {
			if e.state != 1 {
				continue
			}
			if j := r.find(e.hk, e.hash); j >= 0 {
				r.table[j] = setEntry{state: 2, hash: -1}
				r.used--
			} else {
				r.add(e.key, e.hk, e.hash)
			}
		}
	default:
		binErr(t, op, a, b)
	}
	r.Frozen = a.Frozen
	return r
}

// compare is x op y for the comparison operators.
func compare(t *Thread, op string, x, y Value) bool {
	switch op {
	case "==":
		return Equal(x, y)
	case "!=":
		return !Equal(x, y)
	case "is":
		return identical(x, y)
	case "is not":
		return !identical(x, y)
	case "in":
		return contains(t, y, x)
	case "not in":
		return !contains(t, y, x)
	}
	c, ok := compareValues(x, y)
	if !ok {
		t.raise(TypeError, "'%s' not supported between instances of '%s' and '%s'", op, typeName(x), typeName(y))
	}
	if c == 2 {
		return false // NaN, or sets neither subset
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

func contains(t *Thread, container, x Value) bool {
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			t.raise(TypeError, "'in <string>' requires string as left operand, not %s", typeName(x))
		}
		t.Charge("in", 0, uint64(len(c))/kib)
		return strings.Contains(c, s)
	case *List:
		t.Charge("in", 0, uint64(len(c.V)))
		for _, v := range c.V {
			if identical(v, x) || Equal(v, x) {
				return true
			}
		}
		return false
	case Tuple:
		t.Charge("in", 0, uint64(len(c)))
		for _, v := range c {
			if identical(v, x) || Equal(v, x) {
				return true
			}
		}
		return false
	case *Dict:
		if _, ok := hashKey(x); !ok {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(x))
		}
		_, ok := c.Get(x)
		return ok
	case *Set:
		if _, ok := hashKey(x); !ok {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(x))
		}
		return c.Has(x)
	case *Range:
		if n, ok := x.(int64); ok {
			if c.Step > 0 {
				return n >= c.Start && n < c.Stop && (n-c.Start)%c.Step == 0
			}
			return n <= c.Start && n > c.Stop && (c.Start-n)%(-c.Step) == 0
		}
	case *Deque:
		for _, v := range c.V {
			if Equal(v, x) {
				return true
			}
		}
		return false
	}
	found := false
	if _, ok := container.(*Iterator); ok {
		iterate(t, container, func(v Value) bool {
			if Equal(v, x) {
				found = true
				return false
			}
			return true
		})
		return found
	}
	t.raise(TypeError, "argument of type '%s' is not iterable", typeName(container))
	return false
}

// iteration

// iterate calls f for each element of v until f returns false.
func iterate(t *Thread, v Value, f func(Value) bool) {
	switch v := v.(type) {
	case *List:
		for i := 0; i < len(v.V); i++ {
			if !f(v.V[i]) {
				return
			}
		}
	case Tuple:
		for _, x := range v {
			if !f(x) {
				return
			}
		}
	case string:
		for _, r := range v {
			if !f(string(r)) {
				return
			}
		}
	case *Dict:
		n := v.Len()
		for _, k := range v.Keys() {
			if v.Len() != n {
				t.raise(RuntimeError, "dictionary changed size during iteration")
			}
			if !f(k) {
				return
			}
		}
		if v.Len() != n {
			t.raise(RuntimeError, "dictionary changed size during iteration")
		}
	case *Set:
		n := v.used
		for _, k := range v.Keys() {
			if v.used != n {
				t.raise(RuntimeError, "Set changed size during iteration")
			}
			if !f(k) {
				return
			}
		}
	case *Range:
		n := v.Len()
		for i := int64(0); i < n; i++ {
			if !f(v.Start + i*v.Step) {
				return
			}
		}
	case *Iterator:
		for {
			x, ok := v.Next()
			if !ok || !f(x) {
				return
			}
		}
	case *Deque:
		for _, x := range append([]Value{}, v.V...) {
			if !f(x) {
				return
			}
		}
	case *dictView:
		iterate(t, v.values(), f)
	default:
		t.raise(TypeError, "'%s' object is not iterable", typeName(v))
	}
}

// getIter returns an iterator over v (an Iterator is its own).
func getIter(t *Thread, v Value) *Iterator {
	switch x := v.(type) {
	case *Iterator:
		return x
	case *List:
		i := 0
		return &Iterator{Name: "list_iterator", Next: func() (Value, bool) {
			if i >= len(x.V) {
				return nil, false
			}
			i++
			return x.V[i-1], true
		}}
	case *Range:
		i := int64(0)
		n := x.Len()
		return &Iterator{Name: "range_iterator", Next: func() (Value, bool) {
			if i >= n {
				return nil, false
			}
			i++
			return x.Start + (i-1)*x.Step, true
		}}
	case string:
		p := 0
		return &Iterator{Name: "str_ascii_iterator", Next: func() (Value, bool) {
			if p >= len(x) {
				return nil, false
			}
			r, n := utf8.DecodeRuneInString(x[p:])
			p += n
			return string(r), true
		}}
	}
	vs := toSlice(t, v)
	return sliceIter(typeName(v)+"_iterator", vs)
}

// toSlice materialises an iterable (shared for lists and tuples: do not
// modify).
func toSlice(t *Thread, v Value) []Value {
	switch v := v.(type) {
	case *List:
		return v.V
	case Tuple:
		return v
	}
	var out []Value
	iterate(t, v, func(x Value) bool {
		t.Charge("iteration", slotBytes, 1)
		out = append(out, x)
		return true
	})
	return out
}

// code-point strings

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// strLen is len(s) in code points.
func strLen(s string) int {
	return utf8.RuneCountInString(s)
}

// runeOffset returns the byte offset of code point i (0 ≤ i ≤ len).
func runeOffset(s string, i int) int {
	if i <= 0 {
		return 0
	}
	n := 0
	for p := range s {
		if n == i {
			return p
		}
		n++
	}
	return len(s)
}

func indexInt(t *Thread, v Value, what string) int {
	switch v := v.(type) {
	case int64:
		if v > math.MaxInt32 {
			return math.MaxInt32
		}
		if v < math.MinInt32 {
			return math.MinInt32
		}
		return int(v)
	case bool:
		return int(b2i(v))
	case *big.Int:
		if v.Sign() > 0 {
			return math.MaxInt32
		}
		return math.MinInt32
	}
	t.raise(TypeError, "%s indices must be integers or slices, not %s", what, typeName(v))
	return 0
}

func getItem(t *Thread, o, idx Value) Value {
	switch o := o.(type) {
	case *List:
		i := indexInt(t, idx, "list")
		if i < 0 {
			i += len(o.V)
		}
		if i < 0 || i >= len(o.V) {
			t.raise(IndexError, "list index out of range")
		}
		return o.V[i]
	case Tuple:
		i := indexInt(t, idx, "tuple")
		if i < 0 {
			i += len(o)
		}
		if i < 0 || i >= len(o) {
			t.raise(IndexError, "tuple index out of range")
		}
		return o[i]
	case string:
		i := indexInt(t, idx, "string")
		if isASCII(o) {
			if i < 0 {
				i += len(o)
			}
			if i < 0 || i >= len(o) {
				t.raise(IndexError, "string index out of range")
			}
			return o[i : i+1]
		}
		t.Charge("str index", 0, uint64(len(o))/kib)
		n := strLen(o)
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			t.raise(IndexError, "string index out of range")
		}
		p := runeOffset(o, i)
		_, sz := utf8.DecodeRuneInString(o[p:])
		return o[p : p+sz]
	case *Dict:
		if v, ok := o.Get(idx); ok {
			return v
		}
		if _, ok := hashKey(idx); !ok {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(idx))
		}
		if o.Default != nil {
			v := CallValue(t, o.Default, nil, nil)
			t.Charge("defaultdict entry", entryBytes, 1)
			o.Set(idx, v)
			return v
		}
		if o.Counter {
			return int64(0)
		}
		panic(&Exception{Class: KeyError, Args: []Value{idx}, Line: t.line})
	case *Range:
		i := int64(indexInt(t, idx, "range"))
		n := o.Len()
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			t.raise(IndexError, "range object index out of range")
		}
		return o.Start + i*o.Step
	case *Deque:
		i := indexInt(t, idx, "deque")
		if i < 0 {
			i += len(o.V)
		}
		if i < 0 || i >= len(o.V) {
			t.raise(IndexError, "deque index out of range")
		}
		return o.V[i]
	case *Match:
		return o.group(idx)
	}
	t.raise(TypeError, "'%s' object is not subscriptable", typeName(o))
	return nil
}

func setItem(t *Thread, o, idx, v Value) {
	switch o := o.(type) {
	case *List:
		i := indexInt(t, idx, "list")
		if i < 0 {
			i += len(o.V)
		}
		if i < 0 || i >= len(o.V) {
			t.raise(IndexError, "list assignment index out of range")
		}
		o.V[i] = v
		return
	case *Dict:
		if _, ok := o.Get(idx); !ok {
			t.Charge("a dict entry", entryBytes, 1)
		}
		if !o.Set(idx, v) {
			t.raise(TypeError, "unhashable type: '%s'", unhashableName(idx))
		}
		return
	case *Deque:
		i := indexInt(t, idx, "deque")
		if i < 0 {
			i += len(o.V)
		}
		if i < 0 || i >= len(o.V) {
			t.raise(IndexError, "deque index out of range")
		}
		o.V[i] = v
		return
	case Tuple:
		t.raise(TypeError, "'tuple' object does not support item assignment")
	case string:
		t.raise(TypeError, "'str' object does not support item assignment; build a new string, e.g. s[:i] + c + s[i+1:]")
	}
	t.raise(TypeError, "'%s' object does not support item assignment", typeName(o))
}

func delItem(t *Thread, o, idx Value) {
	switch o := o.(type) {
	case *List:
		i := indexInt(t, idx, "list")
		if i < 0 {
			i += len(o.V)
		}
		if i < 0 || i >= len(o.V) {
			t.raise(IndexError, "list assignment index out of range")
		}
		t.Charge("del", 0, uint64(len(o.V)-i))
		o.V = append(o.V[:i], o.V[i+1:]...)
		return
	case *Dict:
		if _, ok := o.Delete(idx); !ok {
			if _, h := hashKey(idx); !h {
				t.raise(TypeError, "unhashable type: '%s'", unhashableName(idx))
			}
			panic(&Exception{Class: KeyError, Args: []Value{idx}, Line: t.line})
		}
		return
	}
	t.raise(TypeError, "'%s' object doesn't support item deletion", typeName(o))
}

// sliceIndices is CPython's PySlice_AdjustIndices.
func sliceIndices(t *Thread, n int, lo, hi, step Value) (start, stop, st int) {
	st = 1
	if step != None {
		st = indexIntSlice(t, step)
		if st == 0 {
			t.raise(ValueError, "slice step cannot be zero")
		}
	}
	if lo == None {
		if st < 0 {
			start = n - 1
		} else {
			start = 0
		}
	} else {
		start = indexIntSlice(t, lo)
		if start < 0 {
			start += n
			if start < 0 {
				if st < 0 {
					start = -1
				} else {
					start = 0
				}
			}
		} else if start >= n {
			if st < 0 {
				start = n - 1
			} else {
				start = n
			}
		}
	}
	if hi == None {
		if st < 0 {
			stop = -1
		} else {
			stop = n
		}
	} else {
		stop = indexIntSlice(t, hi)
		if stop < 0 {
			stop += n
			if stop < 0 {
				if st < 0 {
					stop = -1
				} else {
					stop = 0
				}
			}
		} else if stop >= n {
			if st < 0 {
				stop = n - 1
			} else {
				stop = n
			}
		}
	}
	return
}

func indexIntSlice(t *Thread, v Value) int {
	switch v.(type) {
	case int64, bool, *big.Int:
		return indexInt(t, v, "slice")
	}
	t.raise(TypeError, "slice indices must be integers or None")
	return 0
}

func sliceLen(start, stop, step int) int {
	if step > 0 {
		if start < stop {
			return (stop - start + step - 1) / step
		}
		return 0
	}
	if start > stop {
		return (start - stop - step - 1) / (-step)
	}
	return 0
}

func getSlice(t *Thread, o, lo, hi, step Value) Value {
	switch o := o.(type) {
	case *List:
		return &List{V: sliceValues(t, o.V, lo, hi, step)}
	case Tuple:
		return Tuple(sliceValues(t, o, lo, hi, step))
	case string:
		if isASCII(o) {
			start, stop, st := sliceIndices(t, len(o), lo, hi, step)
			n := sliceLen(start, stop, st)
			t.Charge("str slice", uint64(n)+strHeader, uint64(n)/kib)
			if st == 1 {
				return o[start : start+n]
			}
			b := make([]byte, n)
			for i := 0; i < n; i++ {
				b[i] = o[start+i*st]
			}
			return string(b)
		}
		t.Charge("str slice", uint64(len(o))+strHeader, uint64(len(o))/kib+1)
		rs := []rune(o)
		start, stop, st := sliceIndices(t, len(rs), lo, hi, step)
		n := sliceLen(start, stop, st)
		if st == 1 {
			return string(rs[start : start+n])
		}
		out := make([]rune, n)
		for i := 0; i < n; i++ {
			out[i] = rs[start+i*st]
		}
		return string(out)
	case *Range:
		n := o.Len()
		if n > 1<<31 {
			vs := rangeValuesAll(t, o) // charged: refused by the budget
			return &List{V: sliceValues(t, vs, lo, hi, step)}
		}
		start, stop, st := sliceIndices(t, int(n), lo, hi, step)
		return &Range{o.Start + int64(start)*o.Step, o.Start + int64(stop)*o.Step, o.Step * int64(st)}
	}
	t.raise(TypeError, "'%s' object is not subscriptable", typeName(o))
	return nil
}

func rangeValuesAll(t *Thread, r *Range) []Value {
	n := r.Len()
	t.Charge("range slice", uint64(n)*slotBytes, uint64(n))
	out := make([]Value, n)
	for i := range out {
		out[i] = r.Start + int64(i)*r.Step
	}
	return out
}

func sliceValues(t *Thread, v []Value, lo, hi, step Value) []Value {
	start, stop, st := sliceIndices(t, len(v), lo, hi, step)
	n := sliceLen(start, stop, st)
	t.Charge("slice", uint64(n)*16+64, uint64(n))
	out := make([]Value, n)
	for i := 0; i < n; i++ {
		out[i] = v[start+i*st]
	}
	return out
}

func setSlice(t *Thread, o, lo, hi, step, v Value) {
	l, ok := o.(*List)
	if !ok {
		t.raise(TypeError, "'%s' object does not support slice assignment", typeName(o))
	}
	vs := append([]Value{}, toSlice(t, v)...)
	start, stop, st := sliceIndices(t, len(l.V), lo, hi, step)
	t.Charge("slice assignment", uint64(len(l.V)+len(vs))*16, uint64(len(l.V)+len(vs)))
	if st == 1 {
		if stop < start {
			stop = start
		}
		out := make([]Value, 0, len(l.V)-(stop-start)+len(vs))
		out = append(out, l.V[:start]...)
		out = append(out, vs...)
		out = append(out, l.V[stop:]...)
		l.V = out
		return
	}
	n := sliceLen(start, stop, st)
	if n != len(vs) {
		t.raise(ValueError, "attempt to assign sequence of size %d to extended slice of size %d", len(vs), n)
	}
	for i := 0; i < n; i++ {
		l.V[start+i*st] = vs[i]
	}
}

func delSlice(t *Thread, o, lo, hi, step Value) {
	l, ok := o.(*List)
	if !ok {
		t.raise(TypeError, "'%s' object does not support slice deletion", typeName(o))
	}
	start, stop, st := sliceIndices(t, len(l.V), lo, hi, step)
	n := sliceLen(start, stop, st)
	drop := map[int]bool{}
	for i := 0; i < n; i++ {
		drop[start+i*st] = true
	}
	t.Charge("del slice", 0, uint64(len(l.V)))
	out := l.V[:0:0]
	for i, x := range l.V {
		if !drop[i] {
			out = append(out, x)
		}
	}
	l.V = out
}
