try:
    [].pop()
except IndexError as e:
    print(e)
try:
    "abc".index("z")
except ValueError as e:
    print(e)
