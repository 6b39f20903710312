docs = sparse("American", k=20)
n = 0
for d in docs:
    n += d.text.count("the")
print("the:", n)
