docs = sparse("football", k=3)
print(*[d.id for d in docs])
