docs = dense(question, k=10)
ids = {d.id for d in docs}
print(len(ids), sorted(ids)[:3])
