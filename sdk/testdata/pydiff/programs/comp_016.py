docs = sparse("American", k=10)
print(max(len(d.title) for d in docs), min(len(d.title) for d in docs))
