# question: when was James Dean born
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'James Dean actor', 'James Dean birth date'])
print(len(docs), "unique docs")
print(docs[:3])
