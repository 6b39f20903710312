# question: who directed the 2018 film Robin Hood
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Robin Hood 2018 film', 'Otto Bathurst director'])
print(len(docs), "unique docs")
print(docs[:3])
