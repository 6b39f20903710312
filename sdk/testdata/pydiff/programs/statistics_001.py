import statistics
scores = [d.score for d in sparse("American", k=10)]
print(statistics.mean(scores), statistics.median(scores), round(statistics.pstdev(scores), 4))
