# question: who directed the 2018 film Robin Hood
docs = fuse([sparse('Robin Hood 2018 film', k=5), dense('Robin Hood 2018 film', k=5)])
for i, d in enumerate(docs[:4]):
    print("{:>2} {:<30} {:.4f}".format(i + 1, d.title[:30], d.score))
