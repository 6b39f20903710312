# sandbox: budget_exceeded
xs = [0] * 1000000000
print(len(xs))
