avg = sum(d.score for d in sparse("American", k=10)) / 10
print("avg:", round(avg, 3))
