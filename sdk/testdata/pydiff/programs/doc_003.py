docs = fuse(sparse(question, k=5), dense(question, k=5))
for d in docs[:4]:
    print(d.id, d.routes, "dense" in d.routes, len(d.routes))
