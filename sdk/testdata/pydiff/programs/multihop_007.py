# question: who directed Night of the Twelve
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Night of the Twelve German film'
second = fuse(sparse(entity, k=5), dense('Hans Schweikart', k=5))
print("Hop 2 query:", entity)
print(second[:2])
