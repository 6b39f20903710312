xs = [d.title[0] for d in dense("x", k=30)]
print({c: xs.count(c) for c in sorted(set(xs))})
