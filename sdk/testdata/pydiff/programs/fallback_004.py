# question: what is the main airport of Casablanca
docs = sparse(question, k=5)
if not docs:
    docs = dense(question, k=5)
good = [d for d in docs if 'Casablanca airport'.split()[0].lower() in d.text.lower()]
if good:
    print(good[:2])
else:
    print("No exact match; top dense results:")
    print(dense('Mohammed V International Airport', k=2))
