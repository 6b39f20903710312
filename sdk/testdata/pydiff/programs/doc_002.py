docs = sparse("American", k=10)
print(len(set(docs)), len(set(docs + docs)), docs.index(docs[3]))
