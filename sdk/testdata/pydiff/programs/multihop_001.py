# question: who directed the 2018 film Robin Hood
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Robin Hood 2018 film'
second = fuse(sparse(entity, k=5), dense('Otto Bathurst director', k=5))
print("Hop 2 query:", entity)
print(second[:2])
