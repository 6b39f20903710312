print(hex(255), oct(8), bin(5), int("ff", 16), int("0b101", 0), int("777", 8), float("-0.0"), float("1e3"))
