docs = sparse("film", k=10)
total = 0
for d in docs:
    total += len(d.text)
print(total, total // len(docs), total / len(docs))
