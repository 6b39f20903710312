# question: who wrote Song of Solomon
docs = dense('Song of Solomon novel', k=5)
print(docs[:2])
