# question: where is Wytheville located
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Wytheville Virginia town', 'Wythe County seat'])
print(len(docs), "unique docs")
print(docs[:3])
