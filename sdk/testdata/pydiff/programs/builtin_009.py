xs = [3, 1, 2]
print(sorted(xs), list(reversed(xs)), xs[::-1], xs * 2, xs + [9], 2 in xs, xs.index(2))
