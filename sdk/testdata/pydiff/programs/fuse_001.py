# question: who directed the 2018 film Robin Hood
lists = []
for q in [question, 'Robin Hood 2018 film', 'Otto Bathurst director']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
