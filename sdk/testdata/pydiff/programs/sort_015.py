docs = sparse("American", k=10)
print(max(docs, key=lambda d: len(d.text)).title)
print(min(docs, key=lambda d: d.score).title)
