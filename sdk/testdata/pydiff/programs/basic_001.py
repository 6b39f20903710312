# question: who directed the 2018 film Robin Hood
docs = sparse(question, k=3)
print(docs)
