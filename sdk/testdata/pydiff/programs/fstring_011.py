docs = dense(question, k=3)
print(f"Top: {docs[0].title!s} / {[d.id for d in docs]}")
print(f"{len(docs[0].text)=}")
