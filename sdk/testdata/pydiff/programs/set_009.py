seen = set()
uniq = []
for q in [question, "Robin Hood", "Otto Bathurst"]:
    for d in sparse(q, k=5):
        if d.id not in seen:
            seen.add(d.id)
            uniq.append(d)
print(len(uniq))
print(uniq[:2])
