ids = []
for q in ["Somalia parliament", "Hassan Sheikh Mohamud"]:
    ids += [d.id for d in sparse(q, k=3)]
print(ids)
print(doc(ids[0]).title)
print(doc(ids[0]))
