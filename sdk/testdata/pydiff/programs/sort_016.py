words = "the quick brown fox jumps over the lazy dog".split()
print(sorted(words, key=len), sorted(set(words)), sorted(words, key=lambda w: (len(w), w), reverse=True))
