# question: where is Wytheville located
cands = dedup(sparse(question, k=20) + dense('Wytheville Virginia town', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
