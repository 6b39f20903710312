"""Regenerates the pyjson differential tables under CPython 3.11.

    cd sdk/python/pyjson && python3 testdata/gen.py   (or: go test -run . -args -update)

Values travel as tagged trees: ["int","12"], ["float","<hex>"], ["str",s],
["bool",b], ["none"], ["list",[...]], ["dict",[[k,v],...]], ["set"].
"""
import json, math, sys

def tag(v):
    if v is None: return ["none"]
    if isinstance(v, bool): return ["bool", v]
    if isinstance(v, int): return ["int", str(v)]
    if isinstance(v, float): return ["float", v.hex() if math.isfinite(v) else repr(v)]
    if isinstance(v, str): return ["str", v]
    if isinstance(v, list): return ["list", [tag(x) for x in v]]
    if isinstance(v, dict): return ["dict", [[tag(k), tag(x)] for k, x in v.items()]]
    return ["other", type(v).__name__]

def res(fn):
    try:
        return fn()
    except Exception as e:
        return "!%s: %s" % (type(e).__name__, e)

values = [None, True, False, 0, -1, 2**63, -2**80, 1.0, 0.1, -0.0, 1e16, 1e-7, 1e22, float('nan'), float('inf'),
          float('-inf'), '', 'abc', 'quote"back\\slash/', '\n\r\t\b\f\x00\x1f\x7f', 'caf\u00e9', '\u65e5\u672c',
          '\U0001f600', '\u2028', [], {}, [1, [2, [3, []]]], {'a': 1, 'b': [1, 2, {}], 'c': {'d': None}},
          {1: 'int', 2.5: 'float', True: 'bool', None: 'none', 'b': 'str'}, {'b': 1, 'a': 2, 'c': [3, {'z': 1, 'y': 2}]},
          [{'k': [1.5, 'x']}, [], {}], {float('nan'): 1}, {'x': {1, 2}}, [{1, 2}], {(1, 2): 3}, {2: 'a', 1: 'b'},
          {'a': 1, 2: 'b'}, {-0.0: 1, 1e100: 2}, [1e300 * 10, 12345678901234567890]]
opts = [{}, {'indent': 2}, {'indent': 0}, {'indent': '\t'}, {'indent': -1}, {'sort_keys': True},
        {'ensure_ascii': False}, {'allow_nan': False}, {'separators': (',', ':')}, {'skipkeys': True},
        {'indent': 4, 'sort_keys': True, 'ensure_ascii': False}, {'indent': 1, 'separators': (';', '=')}]
def optag(o):
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()}
dumps = [[tag(v), optag(o), res(lambda: json.dumps(v, **o))] for v in values for o in opts]

docs = ['', ' ', '{', '}', '[', ']', '{"a":1,}', '[1,]', '[1 2]', '"abc', '"a\\q"', '"\\u12"', '"\\u12zz"',
        '"\\u1234', '"a\nb"', '{"a" 1}', '{1:2}', 'nul', 'null', 'true', 'false', 'NaN', 'Infinity', '-Infinity',
        '-Inf', '1.', '-', '01', '1e', '1e5', '1E+5', '1e-5', '1.5e', '-0', '-0.0', '1e400', '-1e400', '1e5x',
        '[1] x', '\ufeff1', '"\\ud800"', '"\\udcff"', '"\\ud83d\\ude00"', '"\\ud83d\\u0041"', '"\\ud83d\\uzzzz"',
        '"\\ud83d"', '"\\ud83d\\"', '{"a":', '"\\', '"abc\\', '123456789012345678901234567890', '-9223372036854775809',
        '9223372036854775807', '1' * 4301, '1' * 4300, ' \n [1, \n 2,\n x]', '{"a":1,"b":2,"a":3}',
        '{"\u00e9\u00e9": [1, "\u65e5"], "x": 1 2}', '"\u65e5\u672c"x', '[1, 2.5, "s", null, true, {"k": []}]',
        '\t{ "a" : [ ] , "b" : { } }\r\n', '[' * 10 + ']' * 10, '{"a": 1', '{"a": 1 ', '{"a"', '{"a" ', '["a" "b"]',
        '"\\/\\b\\f\\n\\r\\t\\"\\\\"', '"\x7f\u0080"', '"\t"', '[01]', '[-]', '[1.e5]', '[.5]', '[+1]', '0x10',
        '"\\U0001F600"', '"\U0001f600" x', '\u3000 1']
loads = [[d, res(lambda: tag(json.loads(d)))] for d in docs]
json.dump({'dumps': dumps, 'loads': loads}, open(sys.argv[1] if len(sys.argv) > 1 else 'testdata/cpython.json', 'w'),
          ensure_ascii=True, indent=0)
