# question: who wrote Song of Solomon
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Song of Solomon novel', 'Toni Morrison author'])
print(len(docs), "unique docs")
print(docs[:3])
