# sandbox: budget_exceeded|unsupported_feature
def f(n):
    return f(n + 1)
print(f(0))
