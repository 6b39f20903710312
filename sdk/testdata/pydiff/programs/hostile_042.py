# sandbox: budget_exceeded
grid = [[0] * 10000 for _ in range(10000)]
print(len(grid))
