scores = [d.score for d in dense(question, k=5)]
print(" ".join("%.3f" % s for s in scores))
print(["{:.2f}".format(s) for s in scores])
