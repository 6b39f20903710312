# question: who composed Christus Apollo
lists = []
for q in [question, 'Christus Apollo cantata', 'Jerry Goldsmith composer']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
