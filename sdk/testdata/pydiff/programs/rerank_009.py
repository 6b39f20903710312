docs = rerank("film director", sparse("film", k=10))
print([(d.title, d.score) for d in docs])
