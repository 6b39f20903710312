# question: when was James Dean born
docs = sparse('James Dean actor', k=3)
for i, d in enumerate(docs, 1):
    print(f"{i}. {d.title} (score={d.score:.2f})")
print(f"{len(docs)} docs for {question!r}")
