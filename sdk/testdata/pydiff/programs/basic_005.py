# question: when was James Dean born
docs = dense('James Dean actor', k=5)
print(docs[:2])
