# question: when was James Dean born
lists = []
for q in [question, 'James Dean actor', 'James Dean birth date']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
