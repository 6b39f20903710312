docs = sparse("Baymax superhero comics", k=8)
titles = [d.title for d in docs if d.score > 2]
print("titles:", titles)
print("any long:", any(len(d.text) > 500 for d in docs))
