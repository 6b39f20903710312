for i in range(20):
    sparse("query %d" % i, k=1)
print("unreachable")
