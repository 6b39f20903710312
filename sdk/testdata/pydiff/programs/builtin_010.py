a, *rest = [1, 2, 3, 4]
x, (y, z) = 1, (2, 3)
print(a, rest, x, y, z)
print([*rest, *"ab"], {**{"a": 1}})
