s = {5, 1, 3}
s.discard(1)
s.update([7, 9])
s.remove(9)
print(sorted(s), len(s), max(s))
