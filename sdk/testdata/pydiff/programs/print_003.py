# question: when was James Dean born
docs = sparse('James Dean actor', k=5)
print("Query:", 'James Dean actor')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
