# sandbox: budget_exceeded
for i in range(10**9):
    pass
print('done')
