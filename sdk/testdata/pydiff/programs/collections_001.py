from collections import Counter
c = Counter(w.lower() for d in sparse("American", k=10) for w in d.title.split())
print(c.most_common(5))
