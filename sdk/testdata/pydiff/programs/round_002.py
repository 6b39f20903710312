print(round(7), round(7.0), round(1.23456, 3), round(1.5), round(-2.5))
