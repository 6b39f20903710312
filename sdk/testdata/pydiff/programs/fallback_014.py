d = {"a": 1}
print(d.get("b", "missing"), d.get("a"))
xs = []
print(xs[0] if xs else "empty")
print(max(xs, default=-1), min([3, 1, 2], default=0))
