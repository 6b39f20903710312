# question: when was James Dean born
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'James Dean actor'
second = fuse(sparse(entity, k=5), dense('James Dean birth date', k=5))
print("Hop 2 query:", entity)
print(second[:2])
