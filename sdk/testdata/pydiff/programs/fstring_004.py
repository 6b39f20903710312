# question: what is the main airport of Casablanca
docs = sparse('Casablanca airport', k=3)
for i, d in enumerate(docs, 1):
    print(f"{i}. {d.title} (score={d.score:.2f})")
print(f"{len(docs)} docs for {question!r}")
