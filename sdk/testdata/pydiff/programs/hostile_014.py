# sandbox: budget_exceeded
while True:
    print("x" * 1000)
