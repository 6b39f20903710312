# sandbox: budget_exceeded
xs = [1]
while len(xs) < 10**9:
    xs = xs + xs
print(len(xs))
