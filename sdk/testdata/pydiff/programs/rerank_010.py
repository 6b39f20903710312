docs = sparse("American", k=15)
top = rerank(question, docs, k=5)
print(top[:2])
print("kept", len(top), "of", len(docs))
