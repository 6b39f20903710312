# sandbox: budget_exceeded
print(sorted(range(10**8))[:3])
