# question: who directed Night of the Twelve
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Night of the Twelve German film', 'Hans Schweikart'])
print(len(docs), "unique docs")
print(docs[:3])
