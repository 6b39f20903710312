package python

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusals: every refused construct gets one line naming it, its line
// and a fix, as an unsupported_feature (Error.Unsupported), never a raw
// parser message.
func TestRefusals(t *testing.T) {
	cases := []struct{ src, want string }{
		{"x = 1\nclass A:\n    pass", "line 2: `class` definitions are not supported; use a dict"},
		{"import os", "line 1: module \"os\" is not available (programs cannot reach files, the network or the process); the allowed modules are math, re"},
		{"from numpy import array", "line 1: module \"numpy\" is not available"},
		{"with open('f') as f:\n    pass", "line 1: `with` statements are not supported"},
		{"def g():\n    yield 1", "line 2: `yield` (generator functions) is not supported; build and return a list instead"},
		{"async def f():\n    pass", "line 1: `async` is not supported"},
		{"x = 1\nprint(x.__class__)", "line 2: dunder attribute access (`.__class__`) is not supported"},
		{"print(open('x'))", "line 1: open() is not available: programs cannot read or write files"},
		{"eval('1')", "line 1: eval() is not available"},
		{"match x:\n    case 1:\n        pass", "line 1: `match` statements are not supported; use if/elif/else"},
		{"@dec\ndef f():\n    pass", "line 1: decorators (`@...`) are not supported"},
		{"x = b'abc'", "line 1: bytes literals (b\"...\") are not supported"},
		{"x = 1j", "line 1: complex numbers (1j) are not supported"},
	}
	for _, c := range cases {
		_, err := Compile(c.src)
		var e *Error
		if !errors.As(err, &e) || !e.Unsupported || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v (unsupported=%v), want prefix %q", c.src, err, e != nil && e.Unsupported, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: message has several lines: %q", c.src, err)
		}
	}
}

// TestSyntaxErrors: plain syntax errors name the line and what to do.
func TestSyntaxErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"if x\n    pass", "line 1: invalid syntax: expected `:` at the end of the `if` line"},
		{"print('a'", "line 1: unexpected end of program: a bracket"},
		{"x = 'abc", "line 1: unterminated string literal"},
		{"def f():\nreturn 1", "line 2: expected an indented block after the `def` line"},
		{"f(x for x in y, 1)", "line 1: invalid syntax: a generator expression must be parenthesized"},
		{"x = f'{'", "line 1: f-string: expecting `}`"},
		{"x = f'}'", "line 1: f-string: single `}` is not allowed"},
		{"1 = x", "line 1: cannot assign to this expression"},
		{"return 1", "line 1: `return` outside a function"},
		{"x = 007", "line 1: leading zeros in a decimal integer literal"},
	}
	for _, c := range cases {
		_, err := Compile(c.src)
		var e *Error
		if !errors.As(err, &e) || e.Unsupported || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want prefix %q", c.src, err, c.want)
		}
	}
}

// TestScanner: literals of every form.
func TestScanner(t *testing.T) {
	cases := []struct{ src, want string }{
		{`print(1_000, 1e-6, 0xff, 0o17, 0b101, 1.5e3, .5, 10.)`, "1000 1e-06 255 15 5 1500.0 0.5 10.0\n"},
		{`print('a\tb', "\x41\u00e9\N{x}" if False else 'z', r'\n', '''x
y''', "a" 'b')`, "compile"},
		{`print('a\tb', r'\n', '''x
y''', "a" 'b', '\101')`, "a\tb \\n x\ny ab A\n"},
		{`x = 3; print(f"{x!r:>4}|{x=}|{'q'}|{{x}}|{x:{'0'}{4}}|{[1,2][0]}")`, "   3|x=3|q|{x}|0003|1\n"},
		{"x = 'hi'\nprint(f'{x!s:^6}|{x!a}|{3.14159:.{2}f}')", "  hi  |'hi'|3.14\n"},
		{"print(f'''{1 +\n 2}''')", "3\n"},
		{"s = 'ü'\nprint(f'{s!a}')", "'\\xfc'\n"},
	}
	for _, c := range cases {
		got := run(t, c.src)
		if c.want == "compile" {
			if !strings.HasPrefix(got, "compile: ") {
				t.Errorf("%q: want a compile error, got %q", c.src, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

// TestSetOrder: sets iterate in CPython 3.11's order (PYTHONHASHSEED=0
// for strings); the expectations are CPython's output.
func TestSetOrder(t *testing.T) {
	cases := []struct{ src, want string }{
		{"print({5, 3, 1, 9, 100, 17})", "{1, 17, 3, 100, 5, 9}\n"},
		{"print(set(range(20, 0, -3)))", "{2, 5, 8, 11, 14, 17, 20}\n"},
		{"s = {1, 2, 3}\ns.discard(2)\ns.add(10)\nprint(s)", "{1, 10, 3}\n"},
		{"print({-1, -2, 0})", "{0, -1, -2}\n"},
		{"print({'apple','banana','cherry','date','fig'}, {'é','ü','x'}, {(1,2),(3,4),(0,)}, {1.5, 2.25, 0.1})", "{'banana', 'fig', 'cherry', 'apple', 'date'} {'é', 'ü', 'x'} {(0,), (1, 2), (3, 4)} {0.1, 1.5, 2.25}\n"},
		{"s = set()\nfor w in 'the quick brown fox jumps over the lazy dog'.split():\n    s.add(w)\nprint(s, sorted(s) == sorted(set(sorted(s))))", "{'brown', 'fox', 'the', 'over', 'quick', 'jumps', 'lazy', 'dog'} True\n"},
	}
	for _, c := range cases {
		if got := run(t, c.src); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

// TestBudgets: steps and memory stop a program, uncatchably.
func TestBudgets(t *testing.T) {
	cases := []struct{ src, want string }{
		{"while True:\n    pass", "Stop: steps budget"},
		{"try:\n    while True:\n        pass\nexcept BaseException:\n    print('caught')", "Stop: steps budget"},
		{"x = 'a' * (1 << 40)", "Stop: memory budget"},
		{"x = [0] * 10**9", "Stop: memory budget"},
		{"def f(n):\n    return f(n + 1)\nf(0)", "Stop: depth budget"},
		{"x = 10 ** (10 ** 8)", "Stop: memory budget"},
		{"xs = []\nfor i in range(10**7):\n    xs.append('x' * 100)", "Stop: "},
	}
	for _, c := range cases {
		if got := run(t, c.src); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s\n got %q\nwant prefix %q", c.src, got, c.want)
		}
	}
}

// TestCostRules enumerates every builtin, type, module function and method
// the runtime exposes and fails when one has no cost rule.
func TestCostRules(t *testing.T) {
	n := 0
	for name, v := range universe {
		switch v.(type) {
		case *Builtin, *Type:
			n++
			if !hasCostRule(name) {
				t.Errorf("builtin %s has no cost rule", name)
			}
		}
	}
	for tn, ms := range methodTables {
		for name, m := range ms {
			n++
			if m.cost == nil || m.fn == nil {
				t.Errorf("method %s.%s has no cost rule", tn, name)
			}
		}
	}
	for _, mod := range allowedModules {
		m := builtModules[mod]
		for name, v := range m.Attrs {
			switch x := v.(type) {
			case *Builtin:
				n++
				if !hasCostRule(x.Name) && !hasCostRule(mod+"."+name) && x.Name != "functools.KeyWrapper" {
					t.Errorf("module function %s.%s has no cost rule", mod, name)
				}
			case *Type:
				n++
				for an, av := range x.Attrs {
					if b, ok := av.(*Builtin); ok && !hasCostRule(b.Name) {
						t.Errorf("%s.%s.%s has no cost rule", mod, name, an)
					}
				}
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d callables enumerated; the enumeration is broken", n)
	}
	t.Logf("%d callables, each with a cost rule", n)
}

// FuzzParse: the scanner, parser and compiler never panic and every
// error is an *Error with a line; corpus in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	seeds := []string{"print(1)", "x = [i for i in range(3) if i]\nprint(f'{x!r:>10}')", "try:\n    1/0\nexcept (ValueError, ZeroDivisionError) as e:\n    print(e)\nfinally:\n    pass",
		"def f(a, b=2, *c, d, **e):\n    return lambda x=1: x\n", "x = {1: 2, **{}}\ny = {*x}\n(a, *b), c = [1, 2], 3", "f'{x:{y}.{z}f}' 'a' f\"{'b'}\"", "if a:\n\tif b:\n        pass", "while x := f():\n    del x[0], y.z"}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Compile(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if strings.Contains(e.Msg, "\n") {
				t.Fatalf("multi-line message %q", e.Msg)
			}
		}
	})
}

func TestFuzzCorpusKept(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzParse"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("testdata/fuzz/FuzzParse corpus missing: %v", err)
	}
}

// FuzzExec: compiled programs run under small budgets without a Go panic
// (every failure is a Python exception or a budget stop); corpus in
// testdata/fuzz/FuzzExec.
func FuzzExec(f *testing.F) {
	for _, s := range []string{"print([x*2 for x in range(5)], {1, 2} | {3}, 'a%sb' % 1, f'{2:>4}')",
		"d = {}\nfor w in 'a b a'.split():\n    d[w] = d.get(w, 0) + 1\nprint(sorted(d.items(), key=lambda kv: -kv[1]))",
		"try:\n    x = [1][2]\nexcept IndexError as e:\n    print(repr(e))\nfinally:\n    print('done')",
		"import re, json, math\nprint(re.sub(r'(\\w+)', r'<\\1>', 'a b'), json.dumps({'a': [1.5, None]}), math.floor(-2.5))",
		"s = 'héllo'\nprint(s[::-1], s.upper(), s.center(9, '*'), '{:08.3f}'.format(3.14159))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Compile(src)
		if err != nil {
			return
		}
		th := &Thread{MaxSteps: 20_000, MaxMem: 1 << 20}
		_ = th.Exec(p, nil) // a Go panic fails the fuzz target
	})
}
