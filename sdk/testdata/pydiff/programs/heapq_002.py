import heapq
h = []
for x in [5, 2, 8, 1]:
    heapq.heappush(h, x)
print(heapq.heappop(h), heapq.heappop(h), h)
xs = [9, 3, 7]
heapq.heapify(xs)
print(xs[0])
