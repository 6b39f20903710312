docs = sparse("German", k=6)
print(list(d.title for d in docs))
print(tuple(d.id[-2:] for d in docs))
