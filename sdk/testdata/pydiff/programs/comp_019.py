words = [w.lower() for d in sparse(question, k=3) for w in d.title.split()]
print(words)
