x = 5
y = "big" if x > 3 else "small"
print(y, (lambda a, b=2: a * b)(4), (lambda *a: len(a))(1, 2, 3))
