# question: where is Wytheville located
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Wytheville Virginia town'
second = fuse(sparse(entity, k=5), dense('Wythe County seat', k=5))
print("Hop 2 query:", entity)
print(second[:2])
