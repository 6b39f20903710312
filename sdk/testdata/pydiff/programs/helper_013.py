def score_doc(d, terms):
    return sum(d.text.lower().count(t) for t in terms)

terms = ["film", "american", "directed"]
docs = sparse(" ".join(terms), k=10)
ranked = sorted(docs, key=lambda d: score_doc(d, terms), reverse=True)
for d in ranked[:3]:
    print(score_doc(d, terms), d.title)
