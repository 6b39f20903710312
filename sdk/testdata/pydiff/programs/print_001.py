# question: who directed the 2018 film Robin Hood
docs = sparse('Robin Hood 2018 film', k=5)
print("Query:", 'Robin Hood 2018 film')
print("Top titles:", [d.title for d in docs])
print("Scores:", [d.score for d in docs])
