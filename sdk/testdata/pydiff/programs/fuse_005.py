# question: who directed Last Vegas
lists = []
for q in [question, 'Last Vegas 2013 comedy film', 'Jon Turteltaub director']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
