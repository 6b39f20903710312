# question: when was James Dean born
docs = sparse(question, k=3)
print(docs)
