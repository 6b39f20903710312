# question: who directed Last Vegas
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Last Vegas 2013 comedy film', 'Jon Turteltaub director'])
print(len(docs), "unique docs")
print(docs[:3])
