docs = sparse("American", k=4)
print(*[d.title for d in docs], sep="\n")
