def f(x, y=2, *args, **kw):
    return x + y + sum(args) + len(kw)

print(f(1), f(1, 3), f(1, 2, 3, 4), f(1, z=5, w=6))
