docs = sparse("rock band California", k=5) or dense("rock band California", k=5)
print(docs[0].title if docs else "none")
