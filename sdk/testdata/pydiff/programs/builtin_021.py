total = 0
def add(x):
    global total
    total += x
for i in range(4):
    add(i)
print(total)
