import math
scores = [d.score for d in dense(question, k=5)]
print([round(math.exp(s), 3) for s in scores], math.fsum(scores) == sum(scores))
