print(1, 2.5, True, None, "s", [1, "a"], (1,), {"k": [1, 2]})
