# question: when was James Dean born
cands = dedup(sparse(question, k=20) + dense('James Dean actor', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
