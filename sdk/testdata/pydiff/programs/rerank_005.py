# question: who directed Last Vegas
cands = dedup(sparse(question, k=20) + dense('Last Vegas 2013 comedy film', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
