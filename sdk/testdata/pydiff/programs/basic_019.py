# question: who directed Night of the Twelve
docs = sparse(question, k=3)
print(docs)
