# question: in which county is Wytheville the county seat
try:
    docs = sparse("Wytheville county seat", k=3)
    top = docs[0]
    print(f"Top document: {top.title}")
    print(f"Excerpt: {top.text[:200]}")
except IndexError:
    print("No results found")
