s = set()
for d in sparse("film", k=10):
    s.add(d.title.split()[0])
print(sorted(s), len(s))
