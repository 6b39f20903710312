# question: what is the main airport of Casablanca
docs = fuse([sparse('Casablanca airport', k=5), dense('Casablanca airport', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
