print(round(7), round(7.0), round(1.23456, 3), type(round(1.5)).__name__ if False else round(1.5), round(-2.5))
