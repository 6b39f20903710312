xs = [3, 1, 2, 5, 4]
xs.sort(reverse=True)
print(xs, sorted(xs), sorted("hello"), sorted([(2, "b"), (1, "z"), (2, "a")]))
