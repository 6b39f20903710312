# question: who directed the 2018 film Robin Hood
docs = sparse('Robin Hood 2018 film', k=3)
for i, d in enumerate(docs, 1):
    print(f"{i}. {d.title} (score={d.score:.2f})")
print(f"{len(docs)} docs for {question!r}")
