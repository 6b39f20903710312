n = 0
while True:
    n += 1
    if n >= 5:
        break
print(n)
for i in range(10):
    if i % 2:
        continue
    n += i
print(n)
