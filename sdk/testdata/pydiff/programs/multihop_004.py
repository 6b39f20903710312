# question: what is the main airport of Casablanca
first = sparse(question, k=3)
print("Hop 1:", [d.title for d in first])
entity = first[0].title if first else 'Casablanca airport'
second = fuse(sparse(entity, k=5), dense('Mohammed V International Airport', k=5))
print("Hop 2 query:", entity)
print(second[:2])
