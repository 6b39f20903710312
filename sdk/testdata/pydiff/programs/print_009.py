# question: who directed Last Vegas
docs = sparse('Last Vegas 2013 comedy film', k=5)
print("Query:", 'Last Vegas 2013 comedy film')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
