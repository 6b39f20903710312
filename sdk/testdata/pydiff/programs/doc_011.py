docs = rerank(question, sparse("film", k=8), k=4)
print([(d.title, d.score) for d in docs])
print(docs)
