print(round(0.1 + 0.2, 10), round(1e-7, 8), round(123.456, 1), round(-1.005, 2), round(5, -1), round(15, -1))
