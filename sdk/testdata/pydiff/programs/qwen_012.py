# question: who produced records as JG
docs = dense("record producer nickname JG", k=8) + sparse("JG record producer", k=8)
docs = dedup(docs)
docs = sorted(docs, key=lambda d: d.score, reverse=True)
titles = [d.title for d in docs]
print(f"{len(titles)} candidates: {', '.join(titles[:5])}")
print(rerank(question, docs, k=2))
