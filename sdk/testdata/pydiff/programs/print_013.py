print("a", "b", "c", sep=", ")
print("x", end="")
print("y")
print()
