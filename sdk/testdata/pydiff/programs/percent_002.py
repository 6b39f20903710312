# question: when was James Dean born
docs = sparse('James Dean actor', k=4)
for d in docs:
    print("%-28s %6.2f %s" % (d.title[:28], d.score, ",".join(d.routes)))
