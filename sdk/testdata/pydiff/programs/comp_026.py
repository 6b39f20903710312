print(sorted({d.title[0] for d in dense("anything", k=20)}))
