"""Regenerates the pyre differential table under CPython 3.11.

    cd sdk/python/pyre && python3 testdata/gen.py   (or: go test -run . -args -update)

Each row: [pattern, flags, subject, template, result]; result is a dict of
the operations or "!error: <re.error text>".
"""
import json, re, sys

def spans(m):
    if m is None:
        return None
    return [list(m.span(i)) for i in range(m.re.groups + 1)]

def run(p, fl, s, tmpl):
    try:
        r = re.compile(p, fl)
    except re.error as e:
        return "!error: %s" % e
    out = {'search': spans(r.search(s)), 'match': spans(r.match(s)), 'fullmatch': spans(r.fullmatch(s)),
           'findall': [list(x) if isinstance(x, tuple) else [x] for x in r.findall(s)],
           'finditer': [list(m.span()) for m in r.finditer(s)],
           'split': r.split(s), 'split1': r.split(s, maxsplit=1)}
    m = r.search(s)
    if m:
        out['groupdict'] = m.groupdict()
    try:
        out['sub'] = list(r.subn(tmpl, s))
        out['sub1'] = r.sub(tmpl, s, count=1)
    except (re.error, IndexError) as e:
        out['sub'] = "!%s: %s" % ('error' if isinstance(e, re.error) else 'IndexError', e)
    return out

I, M, S, X, A = re.I, re.M, re.S, re.X, re.A
cases = [
    (r'abc', 0, 'xxabcxxabc', '[\\g<0>]'),
    (r'a|b', 0, 'cabbage', '<\\g<0>>'),
    (r'x*', 0, 'abxd', '-'),
    (r'x*', 0, '', '-'),
    (r'\d+', 0, 'a1b22c333 \u0661\u0662', '#'),
    (r'\d+', A, 'a1b22c333 \u0661\u0662', '#'),
    (r'\w+', 0, 'caf\u00e9 na\u00efve \u65e5\u672c_1 x-y', '<\\g<0>>'),
    (r'\w+', A, 'caf\u00e9 na\u00efve \u65e5\u672c_1', '<\\g<0>>'),
    (r'\W+', 0, 'caf\u00e9, na\u00efve! ok', '|'),
    (r'\s+', 0, 'a b\tc\u00a0d\u3000e\u2028f\x1cg', '_'),
    (r'\s+', A, 'a b\tc\u00a0d\u3000e', '_'),
    (r'\S+', 0, 'a b\u00a0c', '(\\g<0>)'),
    (r'(\w+)@(\w+)\.com', 0, 'mail bob@example.com and amy@test.com', r'\2 at \1'),
    (r'(?P<user>\w+)@(?P<host>\w+)', 0, 'bob@example amy@test', r'\g<host>:\g<user>'),
    (r'(a)|(b)', 0, 'ab', r'[\1|\2]'),
    (r'(a)(b)?', 0, 'a ab', r'\2\1'),
    (r'^abc', 0, 'abc\nabc', 'X'),
    (r'^abc', M, 'abc\nabc', 'X'),
    (r'abc$', M, 'abc\nabc\n', 'X'),
    (r'abc$', 0, 'abc\nabc', 'X'),
    (r'^', M, 'a\nb\n', '>'),
    (r'a.c', 0, 'abc a\nc', '.'),
    (r'a.c', S, 'abc a\nc', '.'),
    (r'(?s)a.c', 0, 'a\nc', '.'),
    (r'(?i)hello', 0, 'Hello HELLO hello', 'hi'),
    (r'hello', I, 'Hello HELLO', 'hi'),
    (r'(?i:h)ello', 0, 'Hello HELLO hello', 'hi'),
    (r'\AHi\Z', 0, 'Hi', 'x'),
    (r'\AHi\Z', 0, 'Hi\n', 'x'),
    (r'a{2,3}', 0, 'a aa aaa aaaa', '#'),
    (r'a{,2}', 0, 'aaa', '#'),
    (r'a{2}', 0, 'aaaaa', '#'),
    (r'a{,}', 0, 'aa', '#'),
    (r'a{', 0, 'a{', '#'),
    (r'a{x}', 0, 'a{x}', '#'),
    (r'a{}', 0, 'a{}', '#'),
    (r'a+?', 0, 'aaa', '#'),
    (r'<.*?>', 0, '<a><b>', '#'),
    (r'<.*>', 0, '<a><b>', '#'),
    (r'[a-c]+', 0, 'abcdcba', '#'),
    (r'[^a-c]+', 0, 'abcdcba', '#'),
    (r'[\d,]+', 0, '1,234 and 5', '#'),
    (r'[\w.-]+@[\w-]+\.\w+', 0, 'x john.doe-1@ex-ample.org y', '<>'),
    (r'[\W\d]+', 0, 'ab12!?cd', '#'),
    (r'[\s\S]', 0, 'a\n', '#'),
    (r'[]a]', 0, 'a]b', '#'),
    (r'[\]]', 0, 'a]b', '#'),
    (r'[-a]', 0, 'a-b', '#'),
    (r'[a-]', 0, 'a-b', '#'),
    (r'[\n]', 0, 'a\nb', '#'),
    (r'\x41\u00e9\n\t', 0, 'A\u00e9\n\t', '#'),
    (r'\U0001F600+', 0, '\U0001f600\U0001f600!', '#'),
    (r'\0', 0, 'a\x00b', '#'),
    (r'\101', 0, 'AB', '#'),
    (r'\.\*\+\?', 0, '.*+?', '#'),
    (r'(?x) a b c # comment', 0, 'abc', '#'),
    (r'a b c', X, 'abc a b c', '#'),
    (r'[ ]b', X, 'a b', '#'),
    (r'a\ b', X, 'a b', '#'),
    (r'(?:ab)+', 0, 'ababab', '#'),
    (r'(ab)+', 0, 'ababab', '<\\1>'),
    (r'(?#comment)x', 0, 'x', '#'),
    (r'', 0, 'abc', '-'),
    (r'b*', 0, 'abbbc', '-'),
    (r'(,)', 0, 'a,b,,c', '#'),
    (r',', 0, 'a,b,,c', ';'),
    (r'(-)|(\+)', 0, '1-2+3', '#'),
    (r'\b\w', 0, 'hello big world', '#'),
    (r'\Bo', 0, 'foo bo', '#'),
    (r'\d+(?:\.\d+)?', 0, 'pi 3.14 e 2 and 10.5.', '#'),
    (r'(\d{4})-(\d{2})-(\d{2})', 0, 'on 2024-01-15 and 2023-12-31', r'\3/\2/\1'),
    (r'\$(\d+)', 0, 'cost $100 or $5', r'\g<1> dollars'),
    (r'x', 0, 'axbxc', r'\n\t\\'),
    (r'x', 0, 'axb', r'\q'),
    (r'x', 0, 'axb', r'\g<1>'),
    (r'(x)', 0, 'axb', r'\2'),
    (r'(x)', 0, 'axb', r'\g<name>'),
    (r'(x)', 0, 'axb', r'\g<'),
    (r'(x)', 0, 'axb', r'\g<1'),
    (r'(x)', 0, 'axb', r'\g'),
    (r'(x)', 0, 'axb', '\\'),
    (r'(x)', 0, 'axb', r'\.\-'),
    (r'(x)', 0, 'axb', r'\0\101'),
    (r'(?P<n>x)', 0, 'axb', r'\g<n>\g<0>'),
    (r'caf\u00e9', I, 'CAF\u00c9', '#'),
    (r'\u00e9+', 0, '\u00e9\u00e9e\u0301', '#'),
    (r'[\u00e0-\u00ff]+', 0, 'voil\u00e0 \u00e7a', '#'),
    (r'\w+', 0, 'e\u0301t\u00e9', '#'),
    (r'(a|ab)(c|bcd)(d*)', 0, 'abcd', '#'),
    (r'a|', 0, 'ab', '-'),
    (r'(a*)*', 0, 'b', '-'),
    (r'(a*)+', 0, 'b', '-'),
    (r'(?:a|b)*c', 0, 'ababc abc', '#'),
    # errors and refusals
    (r'\q', 0, '', ''), (r'a\q', 0, '', ''), (r'\\', 0, '\\', '#'), ('\\', 0, '', ''), (r'(', 0, '', ''),
    (r')', 0, '', ''), (r'a)', 0, '', ''), (r'[a', 0, '', ''), (r'*', 0, '', ''), (r'a**', 0, '', ''),
    (r'a{3,2}', 0, '', ''), (r'[z-a]', 0, '', ''), (r'(?P<1>x)', 0, '', ''), (r'(?P<a>x)(?P<a>y)', 0, '', ''),
    (r'(?z)', 0, '', ''), (r'a(?i)b', 0, '', ''), (r'\x4', 0, '', ''), (r'\u12', 0, '', ''), (r'(?<x>a)', 0, '', ''),
    (r'(?P', 0, '', ''), (r'(?Px)', 0, '', ''), (r'\8', 0, '', ''), (r'[\q]', 0, '', ''), (r'(?L)a', 0, '', ''),
    (r'^*', 0, '', ''), (r'\b+', 0, '', ''), (r'(?i', 0, '', ''), (r'(?-a:x)', 0, '', ''), (r'(?#x', 0, '', ''),
    (r'x{1001}', 0, '', ''),
    # refused by the sandbox (valid in CPython)
    (r'(a)\1', 0, 'aa', '#'), (r'(?P<x>a)(?P=x)', 0, 'aa', '#'), (r'a(?=b)', 0, 'ab', '#'), (r'a(?!b)', 0, 'ab', '#'),
    (r'(?<=a)b', 0, 'ab', '#'), (r'(?<!a)b', 0, 'ab', '#'), (r'(a)?(?(1)b|c)', 0, 'ab', '#'), (r'(?>a+)b', 0, 'aab', '#'),
    (r'a++', 0, 'aa', '#'), (r'\N{LATIN SMALL LETTER E}', 0, 'e', '#'), (r'[^\W\d]+', 0, 'ab12', '#'),
    # documented differences
    (r'abc$', 0, 'abc\n', 'X'), (r'a$', 0, 'b\na\n', 'X'), (r'$', 0, 'ab\n', '!'), (r'\bcaf\b', 0, 'caf\u00e9', '#'), (r'a*?', 0, 'aa', '-'), (r'(?i)k', A, '\u212a', '#'),
]
rows = [[p, fl, s, t, run(p, fl, s, t)] for p, fl, s, t in cases]
json.dump(rows, open(sys.argv[1] if len(sys.argv) > 1 else 'testdata/cpython.json', 'w'), ensure_ascii=True, indent=0)
