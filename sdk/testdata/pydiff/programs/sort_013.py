docs = dense(question, k=10)
docs.sort(key=lambda d: (-d.score, d.id))
print([(d.id, d.score) for d in docs[:4]])
