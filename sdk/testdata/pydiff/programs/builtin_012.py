xs = [1, 2, 3]
xs.append(4)
xs.extend([5, 6])
xs.insert(0, 0)
xs.remove(3)
print(xs, xs.pop(), xs.pop(0), xs, xs.count(2))
del xs[0]
print(xs)
