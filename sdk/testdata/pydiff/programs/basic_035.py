docs = sparse(question)
print(len(docs))
print(docs[-1].title)
