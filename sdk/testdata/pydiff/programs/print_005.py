# question: who composed Christus Apollo
docs = sparse('Christus Apollo cantata', k=5)
print("Query:", 'Christus Apollo cantata')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
