import math
print(math.factorial(10), math.comb(5, 2), math.perm(5, 2), math.hypot(3, 4), math.trunc(-2.7), math.copysign(1, -0.0))
