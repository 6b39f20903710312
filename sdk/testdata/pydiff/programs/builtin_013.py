x = 10
x += 5
x -= 3
x *= 2
x //= 5
x **= 2
x %= 7
print(x)
l = [1, 2]
l[0] += 10
d = {"a": 1}
d["a"] *= 3
print(l, d)
