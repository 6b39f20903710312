# sandbox: budget_exceeded
s = "x" * 10000000000
print(len(s))
