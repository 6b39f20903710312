inv = {}
for d in sparse("American", k=10):
    for w in set(d.title.split()):
        inv.setdefault(w, set()).add(d.id)
print(sorted((w, sorted(ids)) for w, ids in inv.items() if len(ids) > 1))
