d = sparse("Robin Hood", k=1)[0]
for n in (50, 100, 200, 300, 400):
    print(n, repr(d.text[n - 5:n]))
