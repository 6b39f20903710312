print("{0} {1} {0}".format("a", "b"), "{name}!".format(name="hi"), "{:^9}|".format("mid"))
