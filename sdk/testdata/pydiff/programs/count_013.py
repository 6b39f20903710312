docs = dense(question, k=20)
print(len([d for d in docs if "American" in d.text]), "of", len(docs))
