package sdk

import (
	"fmt"
	"math/big"
	mbits "math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Memory and work accounting of one program.
//
// Every operation that can allocate or scan in proportion to its operands
// (binary + - * % | & ^ << in, slices, attribute and method access,
// comprehension elements, and the universe builtins list, tuple, sorted,
// reversed, enumerate, zip, dict, set, str, repr, bytes, int, min, max, all,
// any, fail, getattr, print) is routed through a hook (rewrite.go) that
// estimates its cost before it runs and charges it to the program:
//
//   - bytes: an upper estimate of what the operation allocates (the result
//     and any temporary copies), added to the program's running total,
//     Stats.MemoryBytes. The total is cumulative (bytes the program caused
//     to be allocated, freed or not), so it bounds what the program can make
//     the process hold. When it would pass Budgets.MaxMemoryBytes the
//     operation does not run: budget_exceeded (memory).
//   - steps: work in Starlark steps (one per element visited, one per KiB
//     copied or scanned, n·log2 n for a sort, quadratic for big-int
//     multiplication and decimal conversion), added to the thread's step
//     count. When it would pass Budgets.MaxSteps the operation does not run:
//     budget_exceeded (steps). Long builtins (sorted, the size walk) also
//     check the deadline and cancellation every few thousand elements.
//
// Not charged: list, tuple and dict literals and function values, whose
// size is bounded by the source (64 KiB) times the steps that evaluate them,
// and the left operand's copy in augmented assignments to a target that is
// not a name or a[i] with i a name or literal (a[f()] *= n);
// Config.MaxHeapBytes's process-wide watchdog remains as
// the backstop.
const (
	slotBytes   = 48   // one materialised element: a 16-byte interface slot, its boxed value, and append growth
	entryBytes  = 192  // one dict or set entry: the 56-byte hashtable entry, bucket and growth copies, boxed key
	strHeader   = 16   // a string header
	renderBytes = 64   // temporary allocation per element rendered by str/repr/print/%/format
	kibPerStep  = 1024 // bytes copied or scanned per charged step
	checkEvery  = 4096 // elements between deadline checks inside long builtins
)

// charge accounts an operation of about bytes bytes and steps steps before
// it runs; what names it in the error. It fails (and stops the program)
// when the operation would pass the memory or step budget, or when the
// program has been stopped (deadline, cancellation).
func (st *execState) charge(th *starlark.Thread, what string, bytes, steps uint64) error {
	if e := st.stop.Load(); e != nil {
		return e
	}
	if bytes > 0 {
		lim := uint64(st.b.MaxMemoryBytes)
		if bytes > lim || st.mem > lim-bytes {
			err := newErr(CodeBudget, ErrBudget, "memory budget exceeded: %s would allocate about %s; %s of the program's %s are already used", what, fmtBytes(bytes), fmtBytes(st.mem), fmtBytes(lim))
			st.cancel(err)
			return err
		}
	}
	if steps > 0 {
		if steps > st.b.MaxSteps || th.Steps > st.b.MaxSteps-steps {
			err := newErr(CodeBudget, ErrBudget, "step budget of %d Starlark steps exceeded: %s needs about %d steps, %d are used", st.b.MaxSteps, what, steps, th.Steps)
			st.cancel(err)
			return err
		}
		th.Steps += steps
	}
	st.mem += bytes
	if steps > checkEvery {
		return st.interrupted()
	}
	return nil
}

// interrupted reports the program's stop reason, if any, checking the
// deadline and the caller's context too.
func (st *execState) interrupted() error {
	if e := st.stop.Load(); e != nil {
		return e
	}
	if st.ctx.Err() != nil {
		e := st.ctxErr()
		st.cancel(e)
		return e
	}
	return nil
}

func fmtBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// mul returns a*b, saturating.
func mul(a, b uint64) uint64 {
	hi, lo := mbits.Mul64(a, b)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// add returns a+b, saturating.
func add(a, b uint64) uint64 {
	s, c := mbits.Add64(a, b, 0)
	if c != 0 {
		return ^uint64(0)
	}
	return s
}

// length returns the length of a sized value, 0 when it has none.
func length(v starlark.Value) uint64 {
	if n := starlark.Len(v); n > 0 {
		return uint64(n)
	}
	return 0
}

// intBits returns the bit length of x.
func intBits(x starlark.Int) uint64 {
	if v, ok := x.Int64(); ok {
		if v < 0 {
			v = -v
		}
		return uint64(mbits.Len64(uint64(v)))
	}
	return uint64(x.BigInt().BitLen())
}

// intCost is the memory charge, in bytes, of an int result of rbits bits
// (of any operation: +, -, |, &, ^, <<, *): nothing for a result that fits
// in 64 bits (a small int), else its bytes (rbits/8) plus 32 of header.
// The step charge of the operation is separate (binaryCost).
func intCost(rbits uint64) uint64 {
	if rbits <= 64 {
		return 0
	}
	return rbits/8 + 32
}

// words64 is the number of 64-bit words of b bits.
func words64(b uint64) uint64 { return (b + 63) / 64 }

// binaryCost estimates the bytes and steps of x op y.
func binaryCost(op syntax.Token, x, y starlark.Value) (bytes, steps uint64) {
	switch op {
	case syntax.IN, syntax.NOT_IN:
		switch y := y.(type) {
		case starlark.String:
			return 0, uint64(len(y)) / kibPerStep
		case *starlark.List, starlark.Tuple:
			return 0, length(y)
		}
		return 0, 0
	case syntax.PLUS:
		switch x := x.(type) {
		case starlark.String:
			if y, ok := y.(starlark.String); ok {
				n := uint64(len(x)) + uint64(len(y))
				return n + strHeader, n / kibPerStep
			}
		case starlark.Bytes:
			if y, ok := y.(starlark.Bytes); ok {
				n := uint64(len(x)) + uint64(len(y))
				return n + strHeader, n / kibPerStep
			}
		case *starlark.List, starlark.Tuple:
			n := length(x) + length(y)
			return n*16 + 64, n
		case starlark.Int:
			if y, ok := y.(starlark.Int); ok {
				b := max(intBits(x), intBits(y)) + 1
				return intCost(b), words64(b) / 16
			}
		}
	case syntax.MINUS, syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX:
		switch x.(type) {
		case starlark.Int:
			if y, ok := y.(starlark.Int); ok {
				b := max(intBits(x.(starlark.Int)), intBits(y)) + 1
				return intCost(b), words64(b) / 16
			}
		case *starlark.Dict, *starlark.Set:
			n := length(x) + length(y)
			return n*entryBytes + 64, n
		}
	case syntax.LTLT:
		if x, ok := x.(starlark.Int); ok {
			if y, ok := y.(starlark.Int); ok {
				s, _ := y.Int64()
				if s < 0 || s > 1<<20 {
					return 0, 0 // Starlark rejects the shift count
				}
				b := intBits(x) + uint64(s)
				return intCost(b), words64(b) / 16
			}
		}
	case syntax.STAR:
		if _, ok := x.(starlark.Int); ok {
			if _, ok := y.(starlark.Int); !ok {
				x, y = y, x // n * seq
			}
		}
		n, isInt := y.(starlark.Int)
		if !isInt {
			return 0, 0
		}
		if xi, ok := x.(starlark.Int); ok {
			xb, yb := intBits(xi), intBits(n)
			b := xb + yb
			return intCost(b), mul(words64(xb), words64(yb)) / 16
		}
		times, ok := n.Int64()
		if !ok {
			if n.Sign() < 0 {
				return 0, 0
			}
			times = 1 << 62
		}
		if times <= 0 {
			return 0, 0
		}
		switch x := x.(type) {
		case starlark.String:
			b := mul(uint64(len(x)), uint64(times))
			return add(b, strHeader), b / kibPerStep
		case starlark.Bytes:
			b := mul(uint64(len(x)), uint64(times))
			return add(b, strHeader), b / kibPerStep
		case *starlark.List, starlark.Tuple:
			e := mul(length(x), uint64(times))
			return add(mul(e, 16), 64), e
		}
	}
	return 0, 0
}

// bin implements ·bin(op, x, y).
func (st *execState) bin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	op := syntax.Token(mustInt(args[0]))
	x, y := args[1], args[2]
	if op == syntax.PERCENT {
		if f, ok := x.(starlark.String); ok {
			if err := st.chargeFormat(th, "%", f, y); err != nil {
				return nil, err
			}
			return starlark.Binary(op, x, y)
		}
	}
	if b, s := binaryCost(op, x, y); b > 0 || s > 0 {
		if err := st.charge(th, "the "+op.String()+" operation", b, s); err != nil {
			return nil, err
		}
	}
	return starlark.Binary(op, x, y)
}

// aug implements ·aug(op, x, y) for name op= y and a[i] op= y: lists extend in place
// under +=, dicts update in place under |=, as Starlark's INPLACE_ADD and
// INPLACE_PIPE do; the rest is x op y.
func (st *execState) aug(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	op := syntax.Token(mustInt(args[0]))
	x, y := args[1], args[2]
	if l, ok := x.(*starlark.List); ok && op == syntax.PLUS {
		if it, ok := y.(starlark.Iterable); ok {
			n := length(y)
			if err := st.charge(th, "+= on a list", n*slotBytes, n); err != nil {
				return nil, err
			}
			// Collect first: l += l appends l's elements once, as
			// Starlark's listExtend does.
			vs := make([]starlark.Value, 0, n)
			iter := it.Iterate()
			var v starlark.Value
			for iter.Next(&v) {
				vs = append(vs, v)
			}
			iter.Done()
			for _, v := range vs {
				if err := l.Append(v); err != nil {
					return nil, fmt.Errorf("cannot apply += to a frozen list")
				}
			}
			return l, nil
		}
	}
	if d, ok := x.(*starlark.Dict); ok && op == syntax.PIPE {
		if yd, ok := y.(*starlark.Dict); ok {
			n := length(yd)
			if err := st.charge(th, "|= on a dict", n*entryBytes, n); err != nil {
				return nil, err
			}
			for _, kv := range yd.Items() {
				if err := d.SetKey(kv[0], kv[1]); err != nil {
					return nil, err
				}
			}
			return d, nil
		}
	}
	return st.bin(th, b, starlark.Tuple{args[0], x, y}, kw)
}

// grow implements ·grow(op, y) for the other augmented assignments
// (a[f()] op= y, a.b[i] op= y, a.f op= y), where the left side is evaluated
// by the opcode itself: it charges what y adds (the
// growth of a list, the appended text); the left operand's copy is not
// charged (the process watchdog covers it).
func (st *execState) grow(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	y := args[1]
	var b, s uint64
	switch y := y.(type) {
	case starlark.String:
		b, s = uint64(len(y))*2+strHeader, uint64(len(y))/kibPerStep
	case starlark.Bytes:
		b, s = uint64(len(y))*2+strHeader, uint64(len(y))/kibPerStep
	default:
		n := length(y)
		b, s = n*slotBytes, n
	}
	if err := st.charge(th, "the augmented assignment", b, s); err != nil {
		return nil, err
	}
	return y, nil
}

// slot and entry implement ·slot(v) and ·entry(v): one element of a list
// (set) comprehension, or one entry of a dict comprehension or of an
// indexed assignment.
func (st *execState) slot(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if err := st.charge(th, "a comprehension", slotBytes, 0); err != nil {
		return nil, err
	}
	return args[0], nil
}

func (st *execState) entry(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if err := st.charge(th, "a dict comprehension or d[k] = v", entryBytes, 0); err != nil {
		return nil, err
	}
	return args[0], nil
}

func mustInt(v starlark.Value) int {
	i, _ := starlark.AsInt32(v)
	return i
}

// slice implements ·slice(x, lo, hi, step) with Starlark's semantics
// (go.starlark.net eval.go slice and indices), charging the copy, and
// refusing range slices whose bounds overflow (Starlark panics on them).
func (st *execState) slice(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, lo, hi, stepV := args[0], args[1], args[2], args[3]
	sl, ok := x.(starlark.Sliceable)
	if !ok {
		return nil, fmt.Errorf("invalid slice operand %s", x.Type())
	}
	n := sl.Len()
	step := 1
	if stepV != starlark.None {
		var err error
		if step, err = starlark.AsInt32(stepV); err != nil {
			return nil, fmt.Errorf("invalid slice step: %s", err)
		}
		if step == 0 {
			return nil, fmt.Errorf("zero is not a valid slice step")
		}
	}
	asIndex := func(v starlark.Value, def int, what string) (int, error) {
		if v == starlark.None {
			return def, nil
		}
		i, err := starlark.AsInt32(v)
		if err != nil {
			return 0, fmt.Errorf("invalid %s index: %s", what, err)
		}
		if i < 0 {
			i += n
		}
		return i, nil
	}
	var start, end int
	var err error
	if step > 0 {
		if start, err = asIndex(lo, 0, "start"); err != nil {
			return nil, err
		}
		start = min(max(start, 0), n)
		if end, err = asIndex(hi, n, "end"); err != nil {
			return nil, err
		}
		end = min(max(end, 0), n)
		end = max(end, start)
	} else {
		if start, err = asIndex(lo, n-1, "start"); err != nil {
			return nil, err
		}
		start = min(start, n-1)
		if end, err = asIndex(hi, -1, "end"); err != nil {
			return nil, err
		}
		end = max(end, -1)
		start = max(start, end)
	}
	var count uint64
	if step > 0 {
		count = uint64((end - start + step - 1) / step)
	} else {
		count = uint64((start - end - step - 1) / -step)
	}
	switch x.Type() {
	case "range":
		if err := checkRangeSlice(x.String(), start, end, step); err != nil {
			return nil, err
		}
	case "string", "bytes":
		if step != 1 {
			if err := st.charge(th, "the slice", count+strHeader, count/kibPerStep); err != nil {
				return nil, err
			}
		}
	default:
		if err := st.charge(th, "the slice", count*16+64, count); err != nil {
			return nil, err
		}
	}
	return sl.Slice(start, end, step), nil
}

// checkRangeSlice refuses a slice of a range (printed as Starlark prints
// it: range(stop), range(start, stop) or range(start, stop, step)) whose
// new start, stop or step overflows an int: Starlark computes them with
// wrapping arithmetic and panics on a step that wraps to 0.
func checkRangeSlice(repr string, i, j, step int) error {
	var a, b, c int64 = 0, 0, 1
	inner := strings.TrimSuffix(strings.TrimPrefix(repr, "range("), ")")
	parts := strings.Split(inner, ", ")
	var err error
	switch len(parts) {
	case 1:
		_, err = fmt.Sscan(parts[0], &b)
	case 2:
		_, err = fmt.Sscan(parts[0]+" "+parts[1], &a, &b)
	case 3:
		_, err = fmt.Sscan(parts[0]+" "+parts[1]+" "+parts[2], &a, &b, &c)
	}
	if err != nil {
		return fmt.Errorf("cannot slice %s", repr)
	}
	fits := func(z *big.Int) bool { return z.IsInt64() && z.Int64() > -(1<<62) && z.Int64() < 1<<62 }
	bs, bc := big.NewInt(a), big.NewInt(c)
	newStart := new(big.Int).Add(bs, new(big.Int).Mul(bc, big.NewInt(int64(i))))
	newStop := new(big.Int).Add(bs, new(big.Int).Mul(bc, big.NewInt(int64(j))))
	newStep := new(big.Int).Mul(bc, big.NewInt(int64(step)))
	if !fits(newStart) || !fits(newStop) || !fits(newStep) {
		return fmt.Errorf("slice of %s is out of range: its start, stop or step would pass ±2^62", repr)
	}
	return nil
}

// sizer estimates len(str(v)) (or repr) without building it, charging one
// step per value visited, and stops once the estimate passes limit.
type sizer struct {
	st    *execState
	th    *starlark.Thread
	limit uint64
	seen  uint64 // values visited
	path  []starlark.Value
	err   error
}

// strSize returns an upper estimate of len(str(v)) (repr(v) when repr),
// charging the walk's steps and the rendering's temporary allocation. The
// walk stops once the estimate passes limit (0: the memory budget); a
// result over limit is returned without charging, for the caller to refuse.
func (st *execState) strSize(th *starlark.Thread, v starlark.Value, repr bool, limit uint64) (uint64, error) {
	if limit == 0 {
		limit = uint64(st.b.MaxMemoryBytes)
	}
	z := &sizer{st: st, th: th, limit: limit + 1}
	n := z.size(v, !repr)
	if z.err == nil && n > limit {
		return n, nil
	}
	if z.err == nil && (z.seen > 1 || repr) {
		// Rendering a container allocates besides its result: the
		// builder's growth copies (≤ n) and each element's own rendering
		// (quoting, number formatting: measured ≈ 57 bytes per element).
		z.err = st.charge(th, "converting a value to text", add(n, mul(z.seen, renderBytes)), z.seen)
	}
	return n, z.err
}

func (z *sizer) visit() bool {
	z.seen++
	if z.err != nil {
		return false
	}
	if z.seen%checkEvery == 0 {
		if z.seen > z.st.b.MaxSteps || z.th.Steps > z.st.b.MaxSteps-z.seen {
			z.err = newErr(CodeBudget, ErrBudget, "step budget of %d Starlark steps exceeded: converting a value to text visits over %d values", z.st.b.MaxSteps, z.seen)
			z.st.cancel(z.err.(*Error))
			return false
		}
		if err := z.st.interrupted(); err != nil {
			z.err = err
			return false
		}
	}
	return true
}

func (z *sizer) size(v starlark.Value, top bool) uint64 {
	if !z.visit() {
		return 0
	}
	switch v := v.(type) {
	case starlark.String:
		if top {
			return uint64(len(v))
		}
		z.seen += uint64(len(v)) / kibPerStep
		return quotedLen(string(v))
	case starlark.Bytes:
		return uint64(len(v))*4 + 3
	case starlark.Int:
		b := intBits(v)
		digits := b*30103/100000 + 2
		z.seen += words64(b) * words64(b) / 16 // decimal conversion is about quadratic
		return digits
	case starlark.Float:
		return 32
	case starlark.Bool, starlark.NoneType:
		return 5
	case docValue:
		return uint64(len(v.d.ID)+len(v.d.Title())) + 64
	case *starlark.List, starlark.Tuple, *starlark.Set, *starlark.Dict:
		for _, p := range z.path {
			if p == v {
				return 5 // [...]
			}
		}
		z.path = append(z.path, v)
		defer func() { z.path = z.path[:len(z.path)-1] }()
		n := uint64(8)
		if d, ok := v.(*starlark.Dict); ok {
			for _, kv := range d.Items() {
				n += z.size(kv[0], false) + z.size(kv[1], false) + 4
				if n > z.limit || z.err != nil {
					return n
				}
			}
			return n
		}
		iter := starlark.Iterate(v)
		defer iter.Done()
		var e starlark.Value
		for iter.Next(&e) {
			n += z.size(e, false) + 2
			if n > z.limit || z.err != nil {
				return n
			}
		}
		return n
	}
	return 128
}

// quotedLen bounds the length of Starlark's quoting of s (syntax.Quote).
func quotedLen(s string) uint64 {
	n := uint64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r':
				n += 2
			case c < 0x20 || c == 0x7f:
				n += 4
			default:
				n++
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && sz == 1:
			n += 4
		case unicode.IsPrint(r):
			n += uint64(sz)
		default:
			n += 10
		}
		i += sz
	}
	return n
}

// chargeText charges a text result of about n bytes.
func (st *execState) chargeText(th *starlark.Thread, what string, n uint64) error {
	return st.charge(th, what, add(n, strHeader), n/kibPerStep)
}

// chargeFormat charges format % args: each directive renders at most the
// largest argument (each argument once when args is a tuple).
func (st *execState) chargeFormat(th *starlark.Thread, what string, format starlark.String, args starlark.Value) error {
	directives := uint64(strings.Count(string(format), "%"))
	var total uint64
	if t, ok := args.(starlark.Tuple); ok {
		for _, a := range t {
			n, err := st.strSize(th, a, false, 0)
			if err != nil {
				return err
			}
			total = add(total, n)
		}
	} else {
		n, err := st.strSize(th, args, false, 0)
		if err != nil {
			return err
		}
		total = mul(n, directives)
	}
	return st.chargeText(th, what, add(uint64(len(format)), total))
}

// attr implements ·attr(x, name) and getattr: methods of strings, lists,
// dicts and sets that allocate or scan come back wrapped so that calling
// them charges first.
func (st *execState) attr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var name string
	var def starlark.Value
	if b.Name() == "getattr" {
		if err := starlark.UnpackPositionalArgs("getattr", args, kwargs, 2, &x, &name, &def); err != nil {
			return nil, err
		}
	} else {
		x, name = args[0], string(args[1].(starlark.String))
	}
	v, err := getAttr(x, name)
	if err != nil || v == nil {
		if def != nil {
			return def, nil
		}
		if err == nil {
			err = fmt.Errorf("%s has no .%s field or method", x.Type(), name)
		}
		return nil, err
	}
	m, ok := v.(*starlark.Builtin)
	if !ok || m.Receiver() == nil {
		return v, nil
	}
	cost := methodCost(x, name)
	if cost == nil {
		return v, nil
	}
	return starlark.NewBuiltin(name, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		bytes, steps, err := cost(st, th, args)
		if err != nil {
			return nil, err
		}
		if err := st.charge(th, fmt.Sprintf("%s.%s()", x.Type(), name), bytes, steps); err != nil {
			return nil, err
		}
		return starlark.Call(th, m, args, kwargs)
	}), nil
}

type costFunc func(st *execState, th *starlark.Thread, args starlark.Tuple) (bytes, steps uint64, err error)

func argLen(args starlark.Tuple, i int) uint64 {
	if i < len(args) {
		return length(args[i])
	}
	return 0
}

func argStr(args starlark.Tuple, i int) (string, bool) {
	if i < len(args) {
		s, ok := args[i].(starlark.String)
		return string(s), ok
	}
	return "", false
}

// methodCost returns the cost estimator of x.name(...), nil for methods
// that neither allocate nor scan in proportion to their operands.
func methodCost(x starlark.Value, name string) costFunc {
	switch x := x.(type) {
	case starlark.String:
		s := string(x)
		scan := uint64(len(s)) / kibPerStep
		switch name {
		case "count", "find", "index", "rfind", "rindex", "startswith", "endswith", "partition", "rpartition",
			"strip", "lstrip", "rstrip", "isalnum", "isalpha", "isdigit", "islower", "isspace", "istitle", "isupper":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return 0, scan, nil }
		case "lower", "upper", "title", "capitalize":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) {
				return uint64(len(s))*3/2 + strHeader, scan, nil
			}
		case "replace":
			return func(_ *execState, _ *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				old, _ := argStr(args, 0)
				nw, _ := argStr(args, 1)
				if len(nw) <= len(old) {
					return uint64(len(s)) + strHeader, scan, nil
				}
				occ := uint64(len(s)) + 1
				if old != "" {
					occ = uint64(strings.Count(s, old))
				}
				if len(args) > 2 {
					if c, err := starlark.AsInt32(args[2]); err == nil && c >= 0 && uint64(c) < occ {
						occ = uint64(c)
					}
				}
				return add(uint64(len(s))+strHeader, mul(occ, uint64(len(nw)-len(old)))), scan, nil
			}
		case "split", "rsplit", "splitlines":
			return func(_ *execState, _ *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				pieces := uint64(len(s))/2 + 1
				if name == "splitlines" {
					pieces = uint64(strings.Count(s, "\n")+strings.Count(s, "\r")) + 1
				} else if sep, ok := argStr(args, 0); ok && sep != "" {
					pieces = uint64(strings.Count(s, sep)) + 1
				}
				return pieces*(slotBytes+strHeader) + 64, scan + pieces, nil
			}
		case "join":
			return func(st *execState, th *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				if len(args) != 1 {
					return 0, 0, nil
				}
				n := length(args[0])
				if err := st.charge(th, "string.join()", 0, n); err != nil {
					return 0, 0, err
				}
				it, ok := args[0].(starlark.Iterable)
				if !ok {
					return 0, 0, nil
				}
				total := mul(uint64(len(s)), n)
				iter := it.Iterate()
				defer iter.Done()
				var e starlark.Value
				for iter.Next(&e) {
					if t, ok := e.(starlark.String); ok {
						total = add(total, uint64(len(t)))
					}
				}
				return total + strHeader, total / kibPerStep, nil
			}
		case "format":
			return func(st *execState, th *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				fields := uint64(strings.Count(s, "{"))
				var big uint64
				for _, a := range args {
					n, err := st.strSize(th, a, false, 0)
					if err != nil {
						return 0, 0, err
					}
					big = max(big, n)
				}
				n := add(uint64(len(s)), mul(fields, big))
				return n + strHeader, n / kibPerStep, nil
			}
		}
	case *starlark.List:
		n := length(x)
		switch name {
		case "append":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return slotBytes, 0, nil }
		case "extend":
			return func(_ *execState, _ *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				m := argLen(args, 0)
				return m * slotBytes, m, nil
			}
		case "insert":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) {
				return slotBytes, n / 64, nil
			}
		case "index", "remove":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return 0, n, nil }
		case "pop":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return 0, n / 64, nil }
		}
	case *starlark.Dict:
		n := length(x)
		switch name {
		case "items":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) {
				return n*(slotBytes+56) + 64, n, nil
			}
		case "keys", "values":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return n*16 + 64, n, nil }
		case "update":
			return func(_ *execState, _ *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				m := argLen(args, 0)
				return m * entryBytes, m, nil
			}
		case "setdefault":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return entryBytes, 0, nil }
		}
	case *starlark.Set:
		n := length(x)
		switch name {
		case "add":
			return func(*execState, *starlark.Thread, starlark.Tuple) (uint64, uint64, error) { return entryBytes, 0, nil }
		case "union", "update", "intersection", "difference", "symmetric_difference", "issubset", "issuperset":
			return func(_ *execState, _ *starlark.Thread, args starlark.Tuple) (uint64, uint64, error) {
				m := n
				for i := range args {
					m += argLen(args, i)
				}
				return m * entryBytes, m, nil
			}
		}
	}
	return nil
}

// universe wraps Starlark's universe builtins that materialise, scan or
// render their argument, charging first; the originals do the work.
func (st *execState) universe(d starlark.StringDict) {
	wrap := func(name string, cost func(th *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (uint64, uint64, error)) {
		orig := starlark.Universe[name]
		d[name] = starlark.NewBuiltin(name, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			b, s, err := cost(th, args, kwargs)
			if err != nil {
				return nil, err
			}
			if err := st.charge(th, name+"()", b, s); err != nil {
				return nil, err
			}
			return starlark.Call(th, orig, args, kwargs)
		})
	}
	perElem := func(bytesPer uint64) func(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (uint64, uint64, error) {
		return func(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (uint64, uint64, error) {
			n := argLen(args, 0)
			if len(args) == 0 {
				n = 0
			}
			n += uint64(len(kwargs))
			return add(mul(n, bytesPer), 64), n, nil
		}
	}
	wrap("list", perElem(slotBytes))
	wrap("tuple", perElem(slotBytes))
	wrap("reversed", perElem(slotBytes))
	wrap("enumerate", perElem(slotBytes+72))
	wrap("dict", perElem(entryBytes))
	wrap("set", perElem(entryBytes))
	scan := func(_ *starlark.Thread, args starlark.Tuple, _ []starlark.Tuple) (uint64, uint64, error) {
		if len(args) == 1 {
			return 0, argLen(args, 0), nil
		}
		return 0, uint64(len(args)), nil
	}
	wrap("min", scan)
	wrap("max", scan)
	wrap("all", scan)
	wrap("any", scan)
	wrap("zip", func(_ *starlark.Thread, args starlark.Tuple, _ []starlark.Tuple) (uint64, uint64, error) {
		if len(args) == 0 {
			return 0, 0, nil
		}
		n := ^uint64(0)
		for i := range args {
			n = min(n, argLen(args, i))
		}
		return add(mul(n, uint64(len(args))*16+72), 64), mul(n, uint64(len(args))), nil
	})
	wrap("bytes", func(_ *starlark.Thread, args starlark.Tuple, _ []starlark.Tuple) (uint64, uint64, error) {
		if s, ok := argStr(args, 0); ok {
			return uint64(len(s)) + strHeader, uint64(len(s)) / kibPerStep, nil
		}
		n := argLen(args, 0)
		return n + strHeader, n, nil
	})
	wrap("int", func(_ *starlark.Thread, args starlark.Tuple, _ []starlark.Tuple) (uint64, uint64, error) {
		s, ok := argStr(args, 0)
		if !ok {
			return 0, 0, nil
		}
		w := words64(uint64(len(s)) * 4) // ≤ 4 bits per character up to base 16 (3.33 for decimal)
		return uint64(len(s))/2 + 32, w * w / 16, nil
	})
	text := func(repr bool) func(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (uint64, uint64, error) {
		return func(th *starlark.Thread, args starlark.Tuple, _ []starlark.Tuple) (uint64, uint64, error) {
			var total uint64
			for _, a := range args {
				if _, isStr := a.(starlark.String); isStr && !repr {
					continue // str of a string is the string itself
				}
				n, err := st.strSize(th, a, repr, 0)
				if err != nil {
					return 0, 0, err
				}
				total = add(total, n+strHeader)
			}
			return total, total / kibPerStep, nil
		}
	}
	wrap("str", text(false))
	wrap("repr", text(true))
	wrap("fail", text(false))
	d["sorted"] = starlark.NewBuiltin("sorted", st.sorted)
	d["getattr"] = starlark.NewBuiltin("getattr", st.attr)
}

// errSortStopped unwinds an interrupted sort.
type errSortStopped struct{ err error }

// sorted is Starlark's sorted(iterable, key=None, reverse=False) (stable;
// reverse keeps equal elements in their original order, as
// sort.Stable(sort.Reverse(...)) does in go.starlark.net), charged n·log2 n
// steps up front and checking the deadline every checkEvery comparisons.
func (st *execState) sorted(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (res starlark.Value, err error) {
	var iterable starlark.Iterable
	var key starlark.Callable
	var reverse bool
	if err := starlark.UnpackArgs("sorted", args, kwargs, "iterable", &iterable, "key?", &key, "reverse?", &reverse); err != nil {
		return nil, err
	}
	n := length(iterable)
	bytesPer := uint64(slotBytes)
	if key != nil {
		bytesPer *= 2
	}
	if err := st.charge(th, "sorted()", add(mul(n, bytesPer), 64), add(n, mul(n, uint64(mbits.Len64(n))))); err != nil {
		return nil, err
	}
	type pair struct{ v, k starlark.Value }
	elems := make([]pair, 0, n)
	iter := iterable.Iterate()
	defer iter.Done()
	var v starlark.Value
	for iter.Next(&v) {
		elems = append(elems, pair{v, v})
	}
	if key != nil {
		for i := range elems {
			k, err := starlark.Call(th, key, starlark.Tuple{elems[i].v}, nil)
			if err != nil {
				return nil, err
			}
			elems[i].k = k
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s, ok := p.(errSortStopped)
			if !ok {
				panic(p)
			}
			res, err = nil, s.err
		}
	}()
	compares := 0
	slices.SortStableFunc(elems, func(a, b pair) int {
		compares++
		if compares%checkEvery == 0 {
			if err := st.interrupted(); err != nil {
				panic(errSortStopped{err})
			}
		}
		if reverse {
			a, b = b, a
		}
		lt, err := starlark.Compare(syntax.LT, a.k, b.k)
		if err != nil {
			panic(errSortStopped{err})
		}
		if lt {
			return -1
		}
		gt, err := starlark.Compare(syntax.LT, b.k, a.k)
		if err != nil {
			panic(errSortStopped{err})
		}
		if gt {
			return 1
		}
		return 0
	})
	out := make([]starlark.Value, len(elems))
	for i := range elems {
		out[i] = elems[i].v
	}
	return starlark.NewList(out), nil
}

// getAttr is x.name as Starlark's ATTR opcode evaluates it (eval.go
// getAttr, without the spelling hint); nil, nil when x has no such field.
func getAttr(x starlark.Value, name string) (starlark.Value, error) {
	h, ok := x.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	v, err := h.Attr(name)
	if nsa, ok := err.(starlark.NoSuchAttrError); ok {
		return nil, fmt.Errorf("%s", string(nsa))
	}
	return v, err
}
