d = sparse(question, k=1)[0]
print(d)
print(str(d))
print(repr(d.title))
