from math import log, sqrt, inf, isnan, gcd
print(log(1), sqrt(2), inf, -inf, isnan(float("nan")), gcd(12, 18))
