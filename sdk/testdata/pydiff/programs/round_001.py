print(round(2.5), round(3.5), round(-0.5), round(0.125, 2), round(2.675, 2), round(1234.5678, -2))
