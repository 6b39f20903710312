xs = [5, 3, 8]
print(sorted(xs, key=lambda v: -v), min(xs, key=abs), max([], default=None), sum([]), list(range(0)))
