# question: when was James Dean born
docs = dense(question, k=3)
for i, d in enumerate(docs, 1):
    print(i, d.title, sep=". ")
