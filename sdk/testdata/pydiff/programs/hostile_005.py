# sandbox: budget_exceeded
xs = [0] * 10**9
print(len(xs))
