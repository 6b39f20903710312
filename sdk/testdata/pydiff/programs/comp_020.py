docs = sparse("born", k=10)
years = [w for d in docs for w in d.text.split() if w.isdigit() and len(w) == 4]
print(years[:10])
