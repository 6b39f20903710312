# question: who wrote Song of Solomon
cands = dedup(sparse(question, k=20) + dense('Song of Solomon novel', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
