# question: who directed the 2018 film Robin Hood
docs = dense(question, k=3)
for i, d in enumerate(docs, 1):
    print(i, d.title, sep=". ")
