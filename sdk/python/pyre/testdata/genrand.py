"""Random-pattern differential table for pyre (CPython 3.11).

    cd sdk/python/pyre && python3 testdata/genrand.py

Patterns come from a small grammar over the alphabet of the subjects; rows
are [pattern, subject, result] with the same result dict as gen.py.
"""
import json, random, re, sys
sys.path.insert(0, 'testdata')
from gen import run

rnd = random.Random(11)
atoms = ['a', 'b', '1', ' ', '\\n', '.', '\\d', '\\w', '\\s', '\\W', '\\D', '\\S', '[ab]', '[^a]', '[a-c1]', '[\\d ]',
         '\u00e9', '[\u00e9b]', '_', '\\b', '\\B', '^', '\\A', '\\Z']
quants = ['', '', '', '*', '+', '?', '{2}', '{1,2}', '{,2}', '+?', '*?']

def pat(d=0):
    k = rnd.random()
    if d < 2 and k < 0.15:
        return '(' + alt(d + 1) + ')'
    if d < 2 and k < 0.25:
        return '(?:' + alt(d + 1) + ')'
    return rnd.choice(atoms)

def seq(d):
    out = ''
    for _ in range(rnd.randint(1, 3)):
        a = pat(d)
        if a not in ('\\b', '\\B', '^', '\\A', '\\Z'):
            a += rnd.choice(quants)
        out += a
    return out

def alt(d):
    return '|'.join(seq(d) for _ in range(rnd.choice([1, 1, 1, 2])))

subjects = ['', 'a', 'ab ab', 'aab1 b\n', 'b\u00e9a 11_', 'a\nb\n\nab', '  ba\u00e9\u00e9 ']
rows = []
seen = set()
while len(rows) < 400:
    p = alt(0)
    if p in seen:
        continue
    seen.add(p)
    fl = rnd.choice([0, 0, re.I, re.M, re.S, re.A])
    s = rnd.choice(subjects)
    rows.append([p, fl, s, '<\\g<0>>', run(p, fl, s, '<\\g<0>>')])
json.dump(rows, open('testdata/cpython_random.json', 'w'), ensure_ascii=True, separators=(',', ':'))
