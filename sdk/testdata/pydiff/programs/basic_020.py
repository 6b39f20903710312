# question: who directed Night of the Twelve
docs = dense('Night of the Twelve German film', k=5)
print(docs[:2])
