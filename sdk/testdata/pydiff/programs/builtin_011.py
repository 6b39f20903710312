if (n := len(sparse("American", k=10))) > 5:
    print("many:", n)
print(0 < n <= 10, 1 < 2 < 1, 1 == 1.0, None is None, [] is not None)
