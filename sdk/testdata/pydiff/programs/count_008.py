docs = sparse("Wimbledon doubles champions", k=10)
counts = {}
for d in docs:
    for w in d.text.lower().split():
        w = w.strip(".,()\"'")
        if len(w) > 5:
            counts[w] = counts.get(w, 0) + 1
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
print(top)
