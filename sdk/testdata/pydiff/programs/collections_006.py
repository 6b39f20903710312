from collections import Counter
a = Counter("aab")
b = Counter("abc")
print(a + b, a - b, a & b, a | b, list(a.keys()), a.total())
