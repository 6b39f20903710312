# question: who directed the 2018 film Robin Hood
docs = sparse(question, k=5)
if not docs:
    docs = dense(question, k=5)
good = [d for d in docs if 'Robin Hood 2018 film'.split()[0].lower() in d.text.lower()]
if good:
    print(good[:2])
else:
    print("No exact match; top dense results:")
    print(dense('Otto Bathurst director', k=2))
