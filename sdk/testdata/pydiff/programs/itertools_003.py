from itertools import permutations, product
print(list(permutations("abc", 2)))
print(list(product([1, 2], "xy")))
print(len(list(product(range(3), repeat=2))))
