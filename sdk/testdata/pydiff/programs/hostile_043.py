# sandbox: budget_exceeded
s = "abc"
for _ in range(40):
    s = s.replace("a", "aa")
print(len(s))
