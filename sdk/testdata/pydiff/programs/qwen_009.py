# question: who is the younger brother of Thomas Gravesen
docs = fuse([sparse("Thomas Gravesen brother", k=10), dense("younger brother of Thomas Gravesen", k=10)])
print("Top 3 by RRF:")
for rank, d in enumerate(docs[:3], start=1):
    print("%d. %s [%s] %.4f" % (rank, d.title, "+".join(d.routes), d.score))
answer_docs = [d for d in docs if "brother" in d.text]
print(answer_docs[:1])
