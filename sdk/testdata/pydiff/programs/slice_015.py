for d in sparse("Gaboš", k=2):
    print(d.contents[:40])
    print(list(d.title))
