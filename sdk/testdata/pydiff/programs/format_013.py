rows = [("alpha", 1, 0.5), ("beta", 22, 0.25), ("gamma", 333, 0.125)]
for n, c, s in rows:
    print("%-6s|%4d|%6.3f" % (n, c, s))
