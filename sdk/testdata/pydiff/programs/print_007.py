# question: what is the main airport of Casablanca
docs = sparse('Casablanca airport', k=5)
print("Query:", 'Casablanca airport')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
