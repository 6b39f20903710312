print("Evidence:")
print(sparse(question, k=2))
print("Done.")
