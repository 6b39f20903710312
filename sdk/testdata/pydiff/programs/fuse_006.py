# question: who wrote Song of Solomon
lists = []
for q in [question, 'Song of Solomon novel', 'Toni Morrison author']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
