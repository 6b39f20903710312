# question: what is the main airport of Casablanca
docs = sparse(question, k=3)
print(docs)
