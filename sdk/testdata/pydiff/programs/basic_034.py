x = sparse("nonexistentword qqq", k=5)
print(x)
print(len(x))
