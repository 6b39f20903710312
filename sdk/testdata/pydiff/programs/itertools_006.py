from itertools import count, takewhile
print(list(takewhile(lambda x: x < 5, count())), list(itertools.repeat("x", 3)) if False else ["x"] * 3)
