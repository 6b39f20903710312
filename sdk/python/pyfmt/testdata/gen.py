"""Regenerates the pyfmt differential tables under CPython 3.11.

    cd sdk/python/pyfmt && python3 testdata/gen.py   (or: go test -run . -args -update)

Each table row is [input..., output] where output is the CPython result or
"!ExcType: message".
"""
import json, math, random, sys

def res(fn):
    try:
        return fn()
    except Exception as e:
        return "!%s: %s" % (type(e).__name__, e)

def fkey(f):
    # floats as repr-exact strings Go can parse (hex for exactness)
    return f.hex() if math.isfinite(f) else repr(f)

rnd = random.Random(33)
floats = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 1e-06, 1e-05, 0.0001, 0.001, 1e16, 1e15, 9999999999999998.0,
          123456789012345.0, 1234567890123456.0, 12345678901234567.0, 1e22, 1e23, 1.7976931348623157e308, 5e-324,
          2.2250738585072014e-308, math.pi, math.e, 1/3, 2/3, 100.0, 1e100, 123.456, 0.125, 0.375, 1e-7, 3.14159e-10,
          float('inf'), float('-inf'), float('nan'), 2.675, 1.005, 0.045, 1234.5, 999.9999, 0.99999999, 9.5, 10.5, -2.5,
          123456.789, 1e5, 1e6, 12345678.9, 0.000123456]
for _ in range(150):
    k = rnd.random()
    if k < 0.3:
        floats.append(rnd.uniform(-1e6, 1e6))
    elif k < 0.6:
        floats.append(float(rnd.randint(-10**6, 10**6)) / 10**rnd.randint(0, 6))
    else:
        floats.append(rnd.choice([-1, 1]) * 10**rnd.uniform(-30, 30))

ints = [0, 1, -1, 7, 42, -42, 255, 1000, 1234567, -1234567, 65, 0x10ffff, 0x110000, 2**64, -2**70, 10**30, 97, 9, 12345]

specs_num = ['', 'd', 'n', 'b', 'o', 'x', 'X', 'c', 'e', 'E', 'f', 'F', 'g', 'G', '%', '.2f', '.0f', '.3e', '.0e', '#.0e',
             '#.0f', '.3g', '.0g', '#g', '#.3g', '.10g', '.17g', '.1', '.2', '.5', '.17', '.0', '#', '#x', '#o', '#b', '#X',
             '+', ' ', '-', '+.2f', ' .2f', '10', '<10', '>10', '^10', '=10', '*^11', '0>8', '08', '010.3f', '+08.2f',
             '-08', ',', '_', ',d', '_d', '_x', '_b', ',x', ',.2f', '_.3f', '012,', '015_.2f', '#012_x', '012,.2f', ',g',
             ',e', ',%', '.1%', '10.1%', 'z', 'z.1f', 'z.0f', 'zf', 'z,.2f', '#,z', ',_', '_,', '.', '.2d', 'q', 'abc',
             ',c', '_n', ',n', '+c', '#c', '=', 'x<5', '\u00e9^7', '=+010', '020,', '0=10', '#010b', '.20f', '.30e',
             '99999999999999999999', 's', ',s', '.3s', 'ä', '%5', 'g,', 'zd', '.2n', 'n']
specs_str = ['', 's', '10', '<10', '>10', '^10', '^9', '*^7', '.2', '10.3', '.0', '+', '-', ' ', '#', '=', '=10', ',', '_',
             '05', '<05', 'z', 'd', 'x', '.', '10s', 'q5', '\u00e9>6', 'ab']
strs = ['', 'a', 'abc', 'h\u00e9llo', '\u65e5\u672c\u8a9e', 'x' * 12, "it's", '\U0001f600ok']

reprs = ['', 'a', "'", '"', '\'"', 'it\'s', 'say "hi"', '\\', '\n\r\t', '\x00\x01\x1f\x7f', '\x80\x9f\xa0\xad\xff',
         '\u00e9\u00e8', '\u2028\u2029\u200b\u200d\ufeff', '\u3000 ', '\ud800'[:0] + 'x', '\U0001f600', '\U000e0001',
         '\U0010ffff', '\uffff', '\u0378', '\u00a0', '\u1680', 'caf\u00e9 \u65e5\u672c', '\t\'x\'\t', '\x1b[0m',
         '\u0300', '\U0001d400', '\ue000', '\U000f0000']

table = {}
table['float_repr'] = [[fkey(f), repr(f)] for f in floats]
table['str_repr'] = [[s, repr(s), ascii(s)] for s in reprs]
table['format_float'] = [[fkey(f), sp, res(lambda: format(f, sp))] for f in floats[:60] for sp in specs_num] + \
    [[fkey(f), sp, res(lambda: format(f, sp))] for f in floats[60:] for sp in ['', '.2f', '.3g', 'e', '.1', ',.2f', '%']]
table['format_int'] = [[str(i), sp, res(lambda: format(i, sp))] for i in ints for sp in specs_num]
table['format_str'] = [[s, sp, res(lambda: format(s, sp))] for s in strs for sp in specs_str]
nds = [0, 1, 2, 3, 5, 10, 17, -1, -2, -5, 400, -400, 308, -308, 323, 324]
table['round'] = [[fkey(f), n, res(lambda: fkey(round(f, n)))] for f in floats for n in nds] + \
    [[fkey(1.7976931348623157e308), -308, res(lambda: fkey(round(1.7976931348623157e308, -308)))]]

# str.format templates, rendered with these arguments.
args = (10, 2.5, 'ab', -3)
kw = {'name': 'xy', 'n': 7, 'w': 8, 'p': 3, 'f': 1234.5678}
templates = ['', 'plain', '{}', '{} {}', '{0} {1} {0}', '{} {1}', '{0} {}', '{name}', '{name!r}', '{2!r:>6}', '{2!a}',
             '{2!s}', '{2!x}', '{2!}', '{2!r', '{', '}', 'a}b', '{{}}', '{{{0}}}', '{:{w}}', '{:{}}', '{0:{w}.{p}f}',
             '{f:,.2f}', '{f:{{}}}', '{n:>{w}}', '{:>{}.{}f}', '{0:{1:{2}}}', '{:{:{}}}', '{0[', '{0[}', '{0]}',
             '{0.}', '{0..x}', '{0[0]x}', '{a{b}', '{:d}', '{1:d}', '{2:d}', '{3:+05d}', '{1:e}', '{0!r:^9}', '{ }',
             '{0:}', '{0!s:}', '{name:*^{w}}', '{99999999999999999999}', '{:}{:}', '{!r}', '{:%}', '{1:.0%}',
             'x{0}y{1}z{2}', '{2:.1}', '{2:=5}', '{3:x}', '{3:#b}', '{0:c}', '{{', '}}', '{0}}', '{{0}']
table['format_template'] = [[t, res(lambda: t.format(*args, **kw))] for t in templates]

pargs = [(), (5,), (5, 'ab'), (2.5,), (-3,), (255,), ('ab',), (1.0, 2), (3, 4, 5), (5, 3, 2.5), (8, 2.5), (0.5,), (97,),
         (float('inf'),), (-0.0,), (1e20,), (123456789,), ('\u00e9t\u00e9',)]
ptemps = ['%d', '%i', '%u', '%5d', '%-5d|', '%05d', '%+d', '% d', '%.3d', '%x', '%#x', '%X', '%#X', '%o', '%#o', '%#08x',
          '%e', '%E', '%.2e', '%f', '%.2f', '%.0f', '%#.0f', '%10.3f', '%-10.3f|', '%010.3f', '%+.1f', '%g', '%G', '%.3g',
          '%#g', '%s', '%r', '%a', '%5s', '%-5s|', '%.1s', '%c', '%%', '100%%', '%', '%q', '%d %s', '%d %d', '%*d',
          '%.*f', '%*.*f', '%-*d|', '%ld', '%(x)s', '%5.1f%%', 'a%sb', '%s %s %s', '%5%', '%F', '%.1F', '%c%c', '%z']
table['percent'] = [[t, [fkey(a) if isinstance(a, float) else a for a in ar],
                     [type(a).__name__ for a in ar], res(lambda: t % ar)] for t in ptemps for ar in pargs]

json.dump(table, open(sys.argv[1] if len(sys.argv) > 1 else 'testdata/cpython.json', 'w'), ensure_ascii=False, indent=0)
