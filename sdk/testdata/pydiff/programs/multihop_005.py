# question: who directed Last Vegas
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Last Vegas 2013 comedy film'
second = fuse(sparse(entity, k=5), dense('Jon Turteltaub director', k=5))
print("Hop 2 query:", entity)
print(second[:2])
