texts = [d.text for d in sparse("Doubles", k=5)]
print([t[:12] for t in texts])
print([len(t) for t in texts])
