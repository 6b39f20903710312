# question: when was James Dean born
docs = fuse([sparse('James Dean actor', k=5), dense('James Dean actor', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
