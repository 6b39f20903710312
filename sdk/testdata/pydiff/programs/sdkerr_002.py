docs = sparse(question, k=3)
print(docs)
print(doc("wiki-999999"))
