import heapq
docs = dense(question, k=20)
top = heapq.nlargest(3, docs, key=lambda d: d.score)
print([(d.title, d.score) for d in top])
print(heapq.nsmallest(2, [5, 1, 4, 2]))
