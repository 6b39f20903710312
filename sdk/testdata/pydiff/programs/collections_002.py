from collections import defaultdict
g = defaultdict(list)
for d in dense(question, k=10):
    g[len(d.title) // 10].append(d.title)
print(dict(sorted(g.items())))
