from collections import defaultdict
counts = defaultdict(int)
for d in sparse("American", k=10):
    for w in d.text.split():
        if w.istitle():
            counts[w] += 1
print(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5])
