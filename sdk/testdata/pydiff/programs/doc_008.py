seen = {}
for d in sparse("American", k=10):
    seen[d] = len(d.text)
print(len(seen), max(seen.values()))
print(list(seen)[:2])
