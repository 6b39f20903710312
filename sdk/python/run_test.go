package python

import (
	"strings"
	"testing"
)

// run executes src and returns what it printed, plus the error line.
func run(t testing.TB, src string) string {
	t.Helper()
	p, err := Compile(src)
	if err != nil {
		return "compile: " + err.Error()
	}
	var sb strings.Builder
	th := &Thread{MaxSteps: 1_000_000, MaxMem: 64 << 20, Print: func(_ *Thread, s string) error { sb.WriteString(s); return nil }}
	if err := th.Exec(p, nil); err != nil {
		if ee, ok := err.(*ExecError); ok {
			sb.WriteString("Error: line " + itoa(ee.Exc.Line) + ": " + ee.Exc.Error())
		} else {
			sb.WriteString("Stop: " + err.Error())
		}
	}
	return sb.String()
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + func() string {
		s := ""
		if n == 0 {
			return "0"
		}
		for n > 0 {
			s = string(rune('0'+n%10)) + s
			n /= 10
		}
		return s
	}())
}

func TestSmoke(t *testing.T) {
	cases := []struct{ src, want string }{
		{`print([], ['a'], {'a': 1}, (1,), {1, 2}, None, True, 1.0, 1e-06, 0.1+0.2)`, "[] ['a'] {'a': 1} (1,) {1, 2} None True 1.0 1e-06 0.30000000000000004\n"},
		{"x = 3.14159\nprint(f'{x:.2f} {x!r:>10} {{}} {\"a\"}')", "3.14    3.14159 {} a\n"},
		{"print(sum(x*x for x in range(5)), any(x > 3 for x in [1,5]))", "30 True\n"},
		{"print('%.3f|%5d|%-4s|' % (1.23456, 42, 'ab'))", "1.235|   42|ab  |\n"},
		{"print('{:.1f} {:>5} {name}'.format(2.25, 'x', name='n'))", "2.2     x n\n"},
		{"xs = [3,1,2]\nxs.sort(key=lambda v: -v)\nprint(xs)", "[3, 2, 1]\n"},
		{"print(*[1,2], sep='-', end='!\\n')", "1-2!\n"},
		{"for i, x in enumerate('ab', start=1):\n    print(i, x)", "1 a\n2 b\n"},
		{"print(dict.fromkeys(['a','b'], 0))", "{'a': 0, 'b': 0}\n"},
		{"try:\n    1/0\nexcept ZeroDivisionError as e:\n    print('caught', e)\nfinally:\n    print('fin')", "caught division by zero\nfin\n"},
		{"try:\n    {}['k']\nexcept LookupError as e:\n    print(repr(e), str(e))", "KeyError('k') 'k'\n"},
		{"print(round(2.5), round(0.125, 2), round(3.14159, 3))", "2 0.12 3.142\n"},
		{"s = 'héllo wörld'\nprint(len(s), s[:4], s[-1], s[::-1])", "11 héll d dlröw olléh\n"},
		{"x = 5\nprint(0 < x < 10, x is None, x is not None)", "True False True\n"},
		{"if (n := 10) > 5:\n    print(n)", "10\n"},
		{"a = [1, 2]\nb = [*a, *a]\nprint(b, {*a})", "[1, 2, 1, 2] {1, 2}\n"},
		{"import math\nprint(math.sqrt(16), math.floor(2.7))", "4.0 2\n"},
		{"from collections import Counter, defaultdict\nc = Counter('abracadabra')\nprint(c.most_common(2))\nd = defaultdict(list)\nd['x'].append(1)\nprint(dict(d))", "[('a', 5), ('b', 2)]\n{'x': [1]}\n"},
		{"import json\nprint(json.dumps({'a': [1, 2.5, None, True]}), json.loads('{\"b\": [1, \"x\"]}'))", "{\"a\": [1, 2.5, null, true]} {'b': [1, 'x']}\n"},
		{"import re\nprint(re.findall(r'\\d+', 'a1b22'), re.sub(r'(a)', r'<\\1>', 'banana'))", "['1', '22'] b<a>n<a>n<a>\n"},
		{"def f(a, b=2, *args, c=3, **kw):\n    return a, b, args, c, kw\nprint(f(1, 5, 6, c=7, d=8))", "(1, 5, (6,), 7, {'d': 8})\n"},
		{"def mk():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n        return n\n    return inc\ni = mk()\ni()\nprint(i())", "2\n"},
		{"print(2**100, -7 // 2, -7 % 2, 7 / 2)", "1267650600228229401496703205376 -4 1 3.5\n"},
		{"print({3, 1, 2}, {'b', 'a'} == {'a', 'b'})", "{1, 2, 3} True\n"},
		{"x = [1,2,3]\nx[1] += 10\nprint(x)\ndel x[0]\nprint(x)", "[1, 12, 3]\n[12, 3]\n"},
		{"print(sorted({'b': 1, 'a': 2}.items(), key=lambda kv: kv[1], reverse=True))", "[('a', 2), ('b', 1)]\n"},
		{"print(max([], default=0), min([3,1], key=lambda v: -v))", "0 3\n"},
		{"print(isinstance(1, int), isinstance('a', (int, str)), isinstance(True, int))", "True True True\n"},
		{"print(list(map(str, [1,2])), list(filter(None, [0,1,2])), list(zip('ab', [1,2])))", "['1', '2'] [1, 2] [('a', 1), ('b', 2)]\n"},
		{"print(divmod(7, 2), pow(2, 10), abs(-3), chr(65), ord('a'))", "(3, 1) 1024 3 A 97\n"},
		{"print('a,b,,c'.split(','), ' x y '.split(), 'abc'.upper().lower().title())", "['a', 'b', '', 'c'] ['x', 'y'] Abc\n"},
		{"print('x'.center(5, '*'), 'ab'.zfill(4), 'a-b-c'.rpartition('-'))", "**x** 00ab ('a-b', '-', 'c')\n"},
		{"print(f'{1234567:,}', f'{0.5:.1%}', f'{42:08.3f}', f'{\"hi\":^6}|')", "1,234,567 50.0% 0042.000   hi  |\n"},
		{"x = 1\nassert x == 2, 'bad'", "Error: line 2: AssertionError: bad"},
		{"raise ValueError('nope')", "Error: line 1: ValueError: nope"},
		{"print(undefined_name)", "Error: line 1: NameError: name 'undefined_name' is not defined"},
	}
	for _, c := range cases {
		got := run(t, c.src)
		if got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}
