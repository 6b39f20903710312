print("%.3s|%10.4s|%-6s|" % ("abcdef", "abcdef", "ab"))
print("%e %E %.2g %G" % (0.000123, 12345.0, 0.000123, 1e-10))
