queries = ["xyzzy plugh", "Baymax", question]
for q in queries:
    docs = sparse(q, k=3)
    if docs:
        print("hit for", repr(q))
        print(docs[0])
        break
else:
    print("nothing found")
