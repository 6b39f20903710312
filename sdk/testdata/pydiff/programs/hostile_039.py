# sandbox: budget_exceeded
for i in range(1000000000):
    pass
