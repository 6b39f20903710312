docs = dense(question, k=2)
print(docs[0].title, "->", round(docs[0].score, 3))
