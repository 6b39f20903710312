def contains_all(d, words):
    t = d.text.lower()
    return all(w in t for w in words)

hits = [d for d in sparse("film directed", k=10) if contains_all(d, ["film", "directed"])]
print([h.title for h in hits])
