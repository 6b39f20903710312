xs = [1, 2, 3]
print(xs[10])
