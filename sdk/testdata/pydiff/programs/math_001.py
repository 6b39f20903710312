import math
print(math.sqrt(16), math.floor(2.7), math.ceil(2.1), math.pi, math.e, math.log(100, 10), math.log2(8), math.isclose(0.1 + 0.2, 0.3))
