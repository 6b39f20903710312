# question: what is the main airport of Casablanca
docs = dense(question, k=3)
for i, d in enumerate(docs, 1):
    print(i, d.title, sep=". ")
