import itertools
qs = ["Robin Hood", "Otto Bathurst", "Lionsgate"]
for a, b in itertools.combinations(qs, 2):
    print(a, "+", b, "->", len(sparse(a + " " + b, k=5)))
