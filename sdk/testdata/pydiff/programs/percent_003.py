# question: who composed Christus Apollo
docs = sparse('Christus Apollo cantata', k=4)
for d in docs:
    print("%-28s %6.2f %s" % (d.title[:28], d.score, ",".join(d.routes)))
