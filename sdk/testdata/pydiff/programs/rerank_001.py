# question: who directed the 2018 film Robin Hood
cands = dedup(sparse(question, k=20) + dense('Robin Hood 2018 film', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
