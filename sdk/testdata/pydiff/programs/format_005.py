# question: who directed Last Vegas
docs = fuse([sparse('Last Vegas 2013 comedy film', k=5), dense('Last Vegas 2013 comedy film', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
