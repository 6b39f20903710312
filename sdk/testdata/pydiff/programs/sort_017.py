docs = fuse(sparse("film", k=10), dense("film", k=10))
top = sorted(docs, key=lambda d: d.score, reverse=True)[:5]
print(top)
