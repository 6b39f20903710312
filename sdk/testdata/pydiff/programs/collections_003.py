from collections import Counter, OrderedDict, deque
c = Counter("mississippi")
print(c, c["s"], c["z"], sorted(c.elements())[:4])
d = deque([1, 2, 3], maxlen=3)
d.append(4)
d.appendleft(0)
print(d, list(d))
print(OrderedDict(a=1, b=2))
