scores = [d.score for d in fuse(sparse(question, k=5), dense(question, k=5))]
print([round(s, 4) for s in scores])
