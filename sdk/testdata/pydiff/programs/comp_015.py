docs = sparse("American", k=10)
print(sum(len(d.text.split()) for d in docs))
