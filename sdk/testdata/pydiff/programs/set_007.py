a = set([1, 2, 3])
b = {3, 4}
print(a | b, a & b, a - b, a ^ b, a.issubset({1, 2, 3, 4}), 2 in a)
