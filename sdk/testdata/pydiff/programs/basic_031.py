print(question)
print(sparse(question, k=1)[0])
