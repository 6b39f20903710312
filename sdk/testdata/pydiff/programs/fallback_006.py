# question: who wrote Song of Solomon
docs = sparse(question, k=5)
if not docs:
    docs = dense(question, k=5)
good = [d for d in docs if 'Song of Solomon novel'.split()[0].lower() in d.text.lower()]
if good:
    print(good[:2])
else:
    print("No exact match; top dense results:")
    print(dense('Toni Morrison author', k=2))
