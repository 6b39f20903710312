# question: what is the main airport of Casablanca
docs = dense('Casablanca airport', k=5)
print(docs[:2])
