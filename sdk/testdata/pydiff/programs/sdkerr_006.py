print(rerank(question, sparse("film", k=5), k=60))
