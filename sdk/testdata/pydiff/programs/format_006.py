# question: who wrote Song of Solomon
docs = fuse([sparse('Song of Solomon novel', k=5), dense('Song of Solomon novel', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
