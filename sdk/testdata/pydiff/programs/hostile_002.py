# sandbox: budget_exceeded
x = 0
while True:
    x += 1
print(x)
