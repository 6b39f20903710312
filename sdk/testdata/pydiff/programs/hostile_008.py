# sandbox: budget_exceeded
d = {}
i = 0
while True:
    d[i] = str(i) * 10
    i += 1
