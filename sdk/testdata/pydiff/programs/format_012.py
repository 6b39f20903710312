print(format(3.14159, ".3f"), format(42, "05d"), format("ab", ">5"), format(0.5, "%"))
