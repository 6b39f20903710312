print("{0[0]} {0[1]} {1[k]}".format(["a", "b"], {"k": "v"}))
print("{:5d}|{:<5d}|{:^5d}|".format(1, 2, 3))
