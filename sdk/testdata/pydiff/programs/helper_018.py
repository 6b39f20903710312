def get_titles(docs):
    return [d.title for d in docs]

a = get_titles(sparse("film", k=5))
b = get_titles(dense("film", k=5))
print("sparse:", a)
print("dense:", b)
print("both:", [t for t in a if t in b])
