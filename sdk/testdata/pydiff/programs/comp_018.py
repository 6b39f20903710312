docs = dense(question, k=5)
pairs = [(i, d.title) for i, d in enumerate(docs)]
print(pairs)
