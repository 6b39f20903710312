from heapq import nlargest
counts = {}
for d in sparse("American", k=10):
    for w in d.text.lower().split():
        counts[w] = counts.get(w, 0) + 1
print(nlargest(4, counts.items(), key=lambda kv: (kv[1], kv[0])))
