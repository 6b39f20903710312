docs = sparse("film", k=3)
print(sorted(docs))
