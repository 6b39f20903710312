# question: who composed Christus Apollo
docs = fuse([sparse('Christus Apollo cantata', k=5), dense('Christus Apollo cantata', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
