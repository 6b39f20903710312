# question: who wrote Song of Solomon
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Song of Solomon novel'
second = fuse(sparse(entity, k=5), dense('Toni Morrison author', k=5))
print("Hop 2 query:", entity)
print(second[:2])
