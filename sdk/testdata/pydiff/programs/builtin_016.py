g = (x * x for x in range(5))
print(sum(g), sum(x for x in range(5)), max((len(w), w) for w in "a bb ccc".split()))
