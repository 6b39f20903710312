docs = sparse("film", k=10)
print(all(d.score > 0 for d in docs))
print(", ".join(d.title for d in docs[:4]))
