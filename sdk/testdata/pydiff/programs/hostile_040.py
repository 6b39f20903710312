# sandbox: budget_exceeded
print(sorted(range(100000000))[:3])
