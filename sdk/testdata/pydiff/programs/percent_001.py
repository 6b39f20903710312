# question: who directed the 2018 film Robin Hood
docs = sparse('Robin Hood 2018 film', k=4)
for d in docs:
    print("%-28s %6.2f %s" % (d.title[:28], d.score, ",".join(d.routes)))
