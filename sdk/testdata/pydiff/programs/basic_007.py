# question: who composed Christus Apollo
docs = sparse(question, k=3)
print(docs)
