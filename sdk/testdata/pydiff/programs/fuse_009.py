docs = fuse(sparse("film", k=5), dense("film", k=5), k=10)
print([(d.id, round(d.score, 5), d.routes) for d in docs[:5]])
