# sandbox: budget_exceeded
while True:
    sparse("film", k=1)
