# sandbox: budget_exceeded
s = "x" * 10**10
print(len(s))
