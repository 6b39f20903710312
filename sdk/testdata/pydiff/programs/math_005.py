import math
print(math.sin(0), math.cos(0), round(math.tan(math.pi / 4), 6), math.degrees(math.pi), math.radians(180), math.pow(2, 0.5))
