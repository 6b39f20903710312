print("one two three".title(), "ONE".capitalize(), "hello world".capitalize(), "ab cd".split(" ", -1))
