# sandbox: budget_exceeded
s = "ab"
while True:
    s = s + s
