# question: who directed Night of the Twelve
docs = sparse(question, k=5)
if not docs:
    docs = dense(question, k=5)
good = [d for d in docs if 'Night of the Twelve German film'.split()[0].lower() in d.text.lower()]
if good:
    print(good[:2])
else:
    print("No exact match; top dense results:")
    print(dense('Hans Schweikart', k=2))
