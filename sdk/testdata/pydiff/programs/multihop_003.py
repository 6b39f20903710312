# question: who composed Christus Apollo
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Christus Apollo cantata'
second = fuse(sparse(entity, k=5), dense('Jerry Goldsmith composer', k=5))
print("Hop 2 query:", entity)
print(second[:2])
