# question: what is the main airport of Casablanca
lists = []
for q in [question, 'Casablanca airport', 'Mohammed V International Airport']:
    lists.append(sparse(q, k=10))
    lists.append(dense(q, k=10))
docs = fuse(lists)
print(len(docs), "fused")
print(docs[:3])
