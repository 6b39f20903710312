# question: what is the main airport of Casablanca
def search_all(queries, k=5):
    out = []
    for q in queries:
        out.extend(sparse(q, k=k))
    return dedup(out)

docs = search_all([question, 'Casablanca airport', 'Mohammed V International Airport'])
print(len(docs), "unique docs")
print(docs[:3])
