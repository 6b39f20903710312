print("before")
docs = sparse(question, k=100)
print("after")
