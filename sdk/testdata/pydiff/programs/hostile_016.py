# sandbox: budget_exceeded
docs = []
for i in range(100):
    docs += dense("q%d" % i, k=50)
print(len(docs))
