docs = sparse("film", k=3)
print(docs[0], docs[1])
