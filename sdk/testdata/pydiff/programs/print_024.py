docs = sparse("film", k=2)
print([d for d in docs])
print(tuple(docs))
