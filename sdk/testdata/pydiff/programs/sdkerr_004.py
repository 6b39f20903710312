docs = sparse("American", k=30)
print(docs)
