print(list(zip(*[(1, "a"), (2, "b")])), dict(enumerate("xyz")), list(map(lambda x, y: x * y, [1, 2], [3, 4])))
