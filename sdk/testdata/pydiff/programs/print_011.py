# question: who wrote Song of Solomon
docs = sparse('Song of Solomon novel', k=5)
print("Query:", 'Song of Solomon novel')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
