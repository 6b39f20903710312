# question: who directed Last Vegas
docs = dense('Last Vegas 2013 comedy film', k=5)
print(docs[:2])
