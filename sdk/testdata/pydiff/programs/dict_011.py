scores = {d.id: d.score for d in dense(question, k=5)}
best = max(scores, key=scores.get)
print(best, scores[best])
