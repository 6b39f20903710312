d = dense(question, k=1)[0]
print("{t} [{i}] {s:.3f}".format(t=d.title, i=d.id, s=d.score))
