for d in dense("anything", k=20):
    print(len(d.text), d.text[:25], "|", d.title[:10])
