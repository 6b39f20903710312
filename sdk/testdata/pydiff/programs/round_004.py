for d in dense(question, k=4):
    print(d.title, round(d.score, 2), round(d.score * 100))
