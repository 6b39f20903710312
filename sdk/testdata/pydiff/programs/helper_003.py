# question: who composed Christus Apollo
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Christus Apollo cantata', 'Jerry Goldsmith composer'])
print(len(docs), "unique docs")
print(docs[:3])
