package python

import (
	"errors"
	"strings"

	"github.com/rlsearch/rlsearch/sdk/python/pyre"
)

// The re module over sdk/python/pyre: Python 3.11 pattern syntax and match
// semantics on a linear-time engine; what cannot run in linear time
// (backreferences, lookaround) is a clear re.error. Every match runs on
// pyre's metered matcher, which charges its work to the step budget as it
// goes (one step per matcher step: one program instruction at one
// position, about 10–50 ns, as a sandbox step is): linear is not enough,
// since the factor is the compiled pattern (counted repetition makes
// thousands of instructions) and findall/sub/split search again after each
// match (findall('a*b|a', 'a'*40000) scans ~800 million steps). Such a
// program ends with the step budget's error within pyre.MeterEvery steps
// of its budget instead of holding a core for minutes.

// Pattern is a compiled re pattern.
type Pattern struct {
	Src string
	re  *pyre.Regexp
}

// Match is an re match.
type Match struct {
	m *pyre.Match
}

func (m *Match) span(i int) [2]int {
	a, b := m.m.Span(i)
	return [2]int{a, b}
}

func (m *Match) groupIndex(g Value) int {
	switch x := g.(type) {
	case int64:
		if x < 0 || int(x) > m.m.Re.NumGroups {
			panic(&Exception{Class: IndexError, Args: []Value{"no such group"}})
		}
		return int(x)
	case bool:
		return int(b2i(x))
	case string:
		i, err := m.m.GroupIndex(x)
		if err != nil {
			panic(&Exception{Class: IndexError, Args: []Value{"no such group"}})
		}
		return i
	}
	panic(&Exception{Class: IndexError, Args: []Value{"no such group"}})
}

func (m *Match) group(g Value) Value {
	s, ok := m.m.Group(m.groupIndex(g))
	if !ok {
		return None
	}
	return s
}

// metered is p's regexp charging its matcher's steps to t's step budget
// (t.Charge stops the thread when the budget is spent).
func (p *Pattern) metered(t *Thread) *pyre.Regexp {
	return p.re.Metered(func(steps uint64) { t.Charge("re", 0, steps) })
}

func reErr(t *Thread, err error) {
	var e *pyre.Error
	if errors.As(err, &e) {
		panic(&Exception{Class: ReError, Args: []Value{e.Error()}, Line: t.line})
	}
	var ie *pyre.IndexError
	if errors.As(err, &ie) {
		panic(&Exception{Class: IndexError, Args: []Value{ie.Msg}, Line: t.line})
	}
	panic(&Exception{Class: ReError, Args: []Value{err.Error()}, Line: t.line})
}

func compilePattern(t *Thread, v Value, flags int64) *Pattern {
	if p, ok := v.(*Pattern); ok {
		return p
	}
	src := asStr(t, v, "pattern")
	re, err := pyre.Compile(src, pyre.Flags(flags))
	if err != nil {
		reErr(t, err)
	}
	return &Pattern{Src: src, re: re}
}

func reFlags(t *Thread, v Value) int64 {
	if v == nil {
		return 0
	}
	return toInt(t, v, "flags")
}

// reCost: linear in the strings (the engine is linear time).
func reCost(t *Thread, recv Value, args []Value) {
	var n uint64
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += uint64(len(s))
		}
	}
	t.Charge("re", n*2+64, n/64+1)
}

func (p *Pattern) sub(t *Thread, repl Value, s string, count int) (string, int) {
	switch r := repl.(type) {
	case string:
		out, n, err := p.metered(t).Subn(r, s, count)
		if err != nil {
			reErr(t, err)
		}
		return out, n
	}
	out, n, err := p.metered(t).SubnFunc(s, count, func(m *pyre.Match) (string, error) {
		v := CallValue(t, repl, []Value{&Match{m}}, nil)
		return asStr(t, v, "re.sub replacement"), nil
	})
	if err != nil {
		reErr(t, err)
	}
	return out, n
}

func optStrings(ps []*string, def Value) []Value {
	out := make([]Value, len(ps))
	for i, p := range ps {
		if p == nil {
			out[i] = def
		} else {
			out[i] = *p
		}
	}
	return out
}

func makeRe() *Module {
	a := map[string]Value{"IGNORECASE": int64(2), "I": int64(2), "MULTILINE": int64(8), "M": int64(8), "DOTALL": int64(16), "S": int64(16), "ASCII": int64(256), "A": int64(256), "UNICODE": int64(32), "U": int64(32), "VERBOSE": int64(64), "X": int64(64), "error": ReError}
	op := func(name string, fn func(t *Thread, p *Pattern, s string) Value) {
		modFn(a, "re", name, reCost, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, name, args, kw, "pattern", "string", "flags?")
			return fn(t, compilePattern(t, x[0], reFlags(t, x[2])), asStr(t, x[1], "string"))
		})
		reg("Pattern", name, reCost, func(t *Thread, r Value, args []Value, kw []KV) Value {
			x := argParse(t, name, args, kw, "string")
			return fn(t, r.(*Pattern), asStr(t, x[0], "string"))
		})
	}
	wrap := func(m *pyre.Match) Value {
		if m == nil {
			return None
		}
		return &Match{m}
	}
	op("search", func(t *Thread, p *Pattern, s string) Value { return wrap(p.metered(t).Search(s)) })
	op("match", func(t *Thread, p *Pattern, s string) Value { return wrap(p.metered(t).Match(s)) })
	op("fullmatch", func(t *Thread, p *Pattern, s string) Value { return wrap(p.metered(t).Fullmatch(s)) })
	op("findall", func(t *Thread, p *Pattern, s string) Value {
		all := p.metered(t).FindAll(s)
		t.Charge("re.findall", uint64(len(all))*slotBytes, uint64(len(all)))
		out := make([]Value, len(all))
		for i, g := range all {
			if len(g) == 1 {
				out[i] = g[0]
				continue
			}
			tu := make(Tuple, len(g))
			for j, x := range g {
				tu[j] = x
			}
			out[i] = tu
		}
		return &List{V: out}
	})
	op("finditer", func(t *Thread, p *Pattern, s string) Value {
		ms := p.metered(t).Finditer(s, -1)
		t.Charge("re.finditer", uint64(len(ms))*slotBytes, uint64(len(ms)))
		out := make([]Value, len(ms))
		for i, m := range ms {
			out[i] = &Match{m}
		}
		return sliceIter("callable_iterator", out)
	})
	split := func(t *Thread, p *Pattern, s string, maxsplit int) Value {
		parts := p.metered(t).Split(s, maxsplit)
		t.Charge("re.split", uint64(len(parts))*slotBytes, uint64(len(parts)))
		return &List{V: optStrings(parts, None)}
	}
	modFn(a, "re", "split", reCost, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "split", args, kw, "pattern", "string", "maxsplit?", "flags?")
		ms := 0
		if x[2] != nil {
			ms = int(toInt(t, x[2], "maxsplit"))
		}
		return split(t, compilePattern(t, x[0], reFlags(t, x[3])), asStr(t, x[1], "string"), ms)
	})
	reg("Pattern", "split", reCost, func(t *Thread, r Value, args []Value, kw []KV) Value {
		x := argParse(t, "split", args, kw, "string", "maxsplit?")
		ms := 0
		if x[1] != nil {
			ms = int(toInt(t, x[1], "maxsplit"))
		}
		return split(t, r.(*Pattern), asStr(t, x[0], "string"), ms)
	})
	subFn := func(name string, withCount bool) {
		modFn(a, "re", name, reCost, func(t *Thread, args []Value, kw []KV) Value {
			x := argParse(t, name, args, kw, "pattern", "repl", "string", "count?", "flags?")
			c := 0
			if x[3] != nil {
				c = int(toInt(t, x[3], "count"))
			}
			s := asStr(t, x[2], "string")
			p := compilePattern(t, x[0], reFlags(t, x[4]))
			if r, ok := x[1].(string); ok {
				t.Charge("re.sub", uint64(len(s))*(uint64(len(r))+1), uint64(len(s))/kib)
			}
			out, n := p.sub(t, x[1], s, c)
			if withCount {
				return Tuple{out, int64(n)}
			}
			return out
		})
		reg("Pattern", name, reCost, func(t *Thread, r Value, args []Value, kw []KV) Value {
			x := argParse(t, name, args, kw, "repl", "string", "count?")
			c := 0
			if x[2] != nil {
				c = int(toInt(t, x[2], "count"))
			}
			s := asStr(t, x[1], "string")
			if rs, ok := x[0].(string); ok {
				t.Charge("re.sub", uint64(len(s))*(uint64(len(rs))+1), uint64(len(s))/kib)
			}
			out, n := r.(*Pattern).sub(t, x[0], s, c)
			if withCount {
				return Tuple{out, int64(n)}
			}
			return out
		})
	}
	subFn("sub", false)
	subFn("subn", true)
	modFn(a, "re", "compile", reCost, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "compile", args, kw, "pattern", "flags?")
		return compilePattern(t, x[0], reFlags(t, x[1]))
	})
	modFn(a, "re", "escape", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "escape", args, kw, "pattern")
		s := asStr(t, x[0], "pattern")
		var sb strings.Builder
		for _, r := range s {
			if r < 0x80 && !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		}
		return sb.String()
	})
	M := func(v Value) *Match { return v.(*Match) }
	reg("Match", "group", cost1, func(t *Thread, r Value, args []Value, kw []KV) Value {
		if len(args) == 0 {
			return M(r).group(int64(0))
		}
		if len(args) == 1 {
			return M(r).group(args[0])
		}
		out := make(Tuple, len(args))
		for i, g := range args {
			out[i] = M(r).group(g)
		}
		return out
	})
	reg("Match", "groups", cost1, func(t *Thread, r Value, args []Value, kw []KV) Value {
		var def Value = None
		if len(args) > 0 {
			def = args[0]
		}
		return Tuple(optStrings(M(r).m.Groups(), def))
	})
	reg("Match", "groupdict", cost1, func(t *Thread, r Value, args []Value, kw []KV) Value {
		var def Value = None
		if len(args) > 0 {
			def = args[0]
		}
		names, vals := M(r).m.GroupDict()
		d := NewDict()
		for i, n := range names {
			if vals[i] == nil {
				d.Set(n, def)
			} else {
				d.Set(n, *vals[i])
			}
		}
		return d
	})
	pos := func(name string, which int) {
		reg("Match", name, cost1, func(t *Thread, r Value, args []Value, kw []KV) Value {
			g := 0
			if len(args) > 0 {
				g = M(r).groupIndex(args[0])
			}
			sp := M(r).span(g)
			switch which {
			case 0:
				return int64(sp[0])
			case 1:
				return int64(sp[1])
			}
			return Tuple{int64(sp[0]), int64(sp[1])}
		})
	}
	pos("start", 0)
	pos("end", 1)
	pos("span", 2)
	return &Module{Name: "re", Attrs: a}
}
