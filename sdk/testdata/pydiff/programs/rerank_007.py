# question: who directed Night of the Twelve
cands = dedup(sparse(question, k=20) + dense('Night of the Twelve German film', k=20))
top = rerank(question, cands, k=3)
print("Reranked %d candidates" % len(cands))
for d in top:
    print(d.title, d.score)
print(top)
