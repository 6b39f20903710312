d = {}
d[(1, 2)] = "tuple key"
d[3] = "int key"
print(d, d.get((1, 2)), d.copy() == d)
