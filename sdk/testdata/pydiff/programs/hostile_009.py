# sandbox: budget_exceeded
x = 2 ** (10**8)
print(x % 10)
