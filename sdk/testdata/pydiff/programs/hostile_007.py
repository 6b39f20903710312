# sandbox: budget_exceeded
xs = []
while True:
    xs.append(len(xs))
