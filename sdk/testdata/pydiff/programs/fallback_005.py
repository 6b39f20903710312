# question: who directed Last Vegas
docs = sparse(question, k=5)
if not docs:
    docs = dense(question, k=5)
good = [d for d in docs if 'Last Vegas 2013 comedy film'.split()[0].lower() in d.text.lower()]
if good:
    print(good[:2])
else:
    print("No exact match; top dense results:")
    print(dense('Jon Turteltaub director', k=2))
