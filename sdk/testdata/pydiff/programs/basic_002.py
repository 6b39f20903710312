# question: who directed the 2018 film Robin Hood
docs = dense('Robin Hood 2018 film', k=5)
print(docs[:2])
