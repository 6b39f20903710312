qs = [question, "Otto Bathurst", "Robin Hood film"]
results = [sparse(q, k=2) for q in qs]
print([[d.title for d in r] for r in results])
