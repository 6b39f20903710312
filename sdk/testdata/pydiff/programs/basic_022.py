# question: where is Wytheville located
docs = sparse(question, k=3)
print(docs)
