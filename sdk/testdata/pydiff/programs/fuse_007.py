# question: who directed Night of the Twelve
lists = []
for q in [question, 'Night of the Twelve German film', 'Hans Schweikart']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
