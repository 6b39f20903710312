a = sparse("film", k=5)
b = dense("film", k=5)
print([d in b for d in a])
print(a[0] == a[0], a[0] == a[1], a[0] != a[1])
