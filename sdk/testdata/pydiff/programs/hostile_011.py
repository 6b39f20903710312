# sandbox: budget_exceeded
print(len("".join(str(i) for i in range(10**8))))
