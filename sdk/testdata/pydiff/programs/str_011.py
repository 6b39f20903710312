for d in sparse("Gaboš", k=3):
    print(d.title, len(d.title), d.title[:4], d.text[:30])
