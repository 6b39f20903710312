d = dense(question, k=1)[0]
print(d.id)
print(d.title)
print(d.score)
print(d.routes)
