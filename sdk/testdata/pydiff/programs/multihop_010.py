seen = {}
for q in ["Jerry Goldsmith", "Ray Bradbury", "cantata"]:
    for d in fuse(sparse(q, k=5), dense(q, k=5)):
        seen.setdefault(d.id, d)
docs = sorted(seen.values(), key=lambda d: (-d.score, d.id))
print(len(docs))
print(docs[:2])
