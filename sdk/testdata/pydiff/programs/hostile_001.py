# sandbox: budget_exceeded
while True:
    pass
