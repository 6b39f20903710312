# question: who wrote Song of Solomon
docs = sparse(question, k=3)
print(docs)
