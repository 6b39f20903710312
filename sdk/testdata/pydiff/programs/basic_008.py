# question: who composed Christus Apollo
docs = dense('Christus Apollo cantata', k=5)
print(docs[:2])
