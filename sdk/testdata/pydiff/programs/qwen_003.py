# question: who composed the cantata Christus Apollo
def search(q, k=10):
    return fuse(sparse(q, k=k), dense(q, k=k))

results = search("Christus Apollo cantata composer")
relevant = [d for d in results if "Goldsmith" in d.text or "cantata" in d.text.lower()]
if relevant:
    print("Relevant documents:")
    print(relevant[:2])
else:
    print("No relevant documents, showing top results")
    print(results[:2])
