# question: who directed Last Vegas
docs = sparse(question, k=3)
print(docs)
