q = question.lower().replace("who", "").replace("?", "").strip()
print(repr(q))
print(sparse(q, k=2))
