print(int("42") + 1, float("3.5"), int(3.99), int(-3.99), float(7), int("  12 "))
