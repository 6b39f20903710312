import math
n = len(sparse("American", k=20))
print(n, math.ceil(n / 3), math.log10(1000), math.isfinite(1.0), math.inf > 10**100)
