print(list(range(5)), list(range(2, 10, 3)), list(range(5, 0, -2)), range(3)[1], len(range(0, 100, 7)))
