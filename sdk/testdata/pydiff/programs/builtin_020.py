def outer():
    count = 0
    def inc():
        nonlocal count
        count += 1
    for _ in range(3):
        inc()
    return count
print(outer())
