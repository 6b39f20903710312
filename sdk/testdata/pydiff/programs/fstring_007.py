# question: who directed Night of the Twelve
docs = sparse('Night of the Twelve German film', k=3)
for i, d in enumerate(docs, 1):
    print(f"{i}. {d.title} (score={d.score:.2f})")
print(f"{len(docs)} docs for {question!r}")
