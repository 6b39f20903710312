# question: where is Wytheville located
lists = []
for q in [question, 'Wytheville Virginia town', 'Wythe County seat']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
