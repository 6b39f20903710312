# question: who composed Christus Apollo
for d in sparse('Jerry Goldsmith composer', k=4):
    print(d.title)
