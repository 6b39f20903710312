# question: who wrote the novel Song of Solomon
from collections import Counter
docs = dense("Song of Solomon novel author", k=10)
authors = Counter()
for d in docs:
    for name in ["Toni Morrison", "Ray Bradbury", "Garth Brooks"]:
        if name in d.text:
            authors[name] += 1
print("Author mentions:", dict(authors))
print(docs[:1])
